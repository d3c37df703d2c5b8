-- +goose Up
-- The dead-letter tooling's own audit log: every replay and discard of a
-- parked record, append-only. These rows were written to fiat_audit until
-- now (actions dlq.replay and dlq.discard); they are moved here, not
-- copied, so each decision is audited exactly once and the fiat audit log
-- holds only fiat's own actions.
CREATE TABLE dlq_audit (
    id         text PRIMARY KEY,
    record_id  text NOT NULL,            -- <dlq topic>:<partition>:<offset>
    action     text NOT NULL CHECK (action IN ('dlq.replay', 'dlq.discard')),
    actor      text NOT NULL,            -- admin:<user id> or cli:<os user>
    detail     text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);
CREATE INDEX dlq_audit_record ON dlq_audit (record_id, created_at, id);

-- +goose StatementBegin
CREATE FUNCTION dlq_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'dlq_audit is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER dlq_audit_no_change BEFORE UPDATE OR DELETE ON dlq_audit
    FOR EACH ROW EXECUTE FUNCTION dlq_audit_append_only();

-- A command parked again after its replay is linked to the replayed record
-- by its command id (when the record no longer carries the replay header).
CREATE INDEX dlq_decisions_replayed_command ON dlq_decisions (command_id) WHERE state = 'replayed';

INSERT INTO dlq_audit (id, record_id, action, actor, detail, created_at)
SELECT id, subject, action, actor, detail, created_at FROM fiat_audit
WHERE action IN ('dlq.replay', 'dlq.discard');
-- fiat_audit is append-only; this one move (in this migration's
-- transaction) lifts the guard for its DELETE alone.
ALTER TABLE fiat_audit DISABLE TRIGGER fiat_audit_no_change;
DELETE FROM fiat_audit WHERE action IN ('dlq.replay', 'dlq.discard');
ALTER TABLE fiat_audit ENABLE TRIGGER fiat_audit_no_change;

-- +goose Down
DROP INDEX dlq_decisions_replayed_command;
INSERT INTO fiat_audit (id, actor, action, subject, detail, created_at)
SELECT id, actor, action, record_id, detail, created_at FROM dlq_audit;
DROP TRIGGER dlq_audit_no_change ON dlq_audit;
DROP FUNCTION dlq_audit_append_only();
DROP TABLE dlq_audit;
