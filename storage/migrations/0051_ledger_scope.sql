-- +goose Up
-- Entries de-duplicate per scope: '' for the platform's own modules, the
-- actor's user id for entries posted through POST /api/ledger/entries. A
-- user can therefore never pre-empt a module's entry for the same source.
ALTER TABLE ledger_entries ADD COLUMN scope text NOT NULL DEFAULT '';
DROP INDEX ledger_entries_source;
CREATE UNIQUE INDEX ledger_entries_source ON ledger_entries (scope, kind, source_id);

-- +goose Down
DROP INDEX ledger_entries_source;
CREATE UNIQUE INDEX ledger_entries_source ON ledger_entries (kind, source_id);
ALTER TABLE ledger_entries DROP COLUMN scope;
