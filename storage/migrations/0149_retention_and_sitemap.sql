-- +goose Up
-- Signed payloads are kept for schemas.SignRetention (30 days) within a
-- per-user budget (schemas.SignPayloadBudget*); the pruner deletes older
-- rows by created_at.
CREATE INDEX sign_signatures_created ON sign_signatures (created_at);

-- The sitemap is served from a cache that is rebuilt when the vacancies
-- change: every write to build_vacancies moves build_changes.version (a
-- statement trigger, so no writer can forget it), and the next expiry of an
-- open vacancy is found on the partial index below.
CREATE TABLE build_changes (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    version bigint NOT NULL
);
INSERT INTO build_changes (version) VALUES (0);

-- +goose StatementBegin
CREATE FUNCTION build_changes_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE build_changes SET version = version + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER build_vacancies_changed AFTER INSERT OR UPDATE OR DELETE ON build_vacancies
    FOR EACH STATEMENT EXECUTE FUNCTION build_changes_bump();
CREATE INDEX build_vacancies_open_expiry ON build_vacancies (expires_at) WHERE status = 'OPEN';

-- +goose Down
DROP INDEX build_vacancies_open_expiry;
DROP TRIGGER build_vacancies_changed ON build_vacancies;
DROP FUNCTION build_changes_bump();
DROP TABLE build_changes;
DROP INDEX sign_signatures_created;
