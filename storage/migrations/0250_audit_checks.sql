-- +goose Up
-- The last run of the background audit (consumers/ledger.Auditor): one row
-- per check with its status, replaced as a whole by every run, so the
-- admin console shows what failed and when it was last checked.
CREATE TABLE audit_checks (
    name   text PRIMARY KEY,
    status text NOT NULL CHECK (status IN ('ok', 'FAILED', 'SKIPPED')),
    detail text NOT NULL DEFAULT '',
    ran_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE audit_checks;
