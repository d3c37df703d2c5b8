-- +goose Up
-- Partner vacancy feeds (build). Employers post projects and vacancies
-- directly from the gateway; partners read open vacancies with a key whose
-- plaintext is never stored (only its SHA-256).
CREATE TABLE build_projects (
    id          text PRIMARY KEY,
    employer_id text NOT NULL,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    city        text NOT NULL DEFAULT '',
    url         text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL
);
CREATE INDEX build_projects_employer ON build_projects (employer_id, created_at DESC);

CREATE TABLE build_vacancies (
    id              text PRIMARY KEY,
    project_id      text NOT NULL REFERENCES build_projects (id),
    employer_id     text NOT NULL,
    title           text NOT NULL,
    description     text NOT NULL,
    salary          bigint NOT NULL CHECK (salary > 0),
    salary_currency text NOT NULL,
    skills          text[] NOT NULL DEFAULT '{}',
    city            text NOT NULL,
    status          text NOT NULL CHECK (status IN ('OPEN', 'CLOSED')),
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    closed_at       timestamptz
);
-- The partner feed: open vacancies, newest first.
CREATE INDEX build_vacancies_open ON build_vacancies (created_at DESC, id DESC) WHERE status = 'OPEN';
CREATE INDEX build_vacancies_employer ON build_vacancies (employer_id, status);
CREATE INDEX build_vacancies_project ON build_vacancies (project_id);

CREATE TABLE build_partner_keys (
    id          text PRIMARY KEY,
    employer_id text NOT NULL,
    key_hash    bytea NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX build_partner_keys_employer ON build_partner_keys (employer_id);

-- +goose Down
DROP TABLE build_partner_keys;
DROP TABLE build_vacancies;
DROP TABLE build_projects;
