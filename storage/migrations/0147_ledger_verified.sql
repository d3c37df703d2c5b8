-- +goose Up
-- The last verified chain head (one row): /api/ledger/chain/verify walks
-- only the entries above it, and the background full walk
-- (LEDGER_AUDIT_INTERVAL) moves it and records a break it finds in
-- `broken` (the verification result), which every answer then carries
-- until a full walk finds the chain whole again.
CREATE TABLE ledger_verified (
    id           boolean PRIMARY KEY DEFAULT true CHECK (id),
    height       bigint NOT NULL CHECK (height >= 0),
    hash         text NOT NULL,
    verified_at  timestamptz NOT NULL,
    full_walk_at timestamptz,
    broken       jsonb
);

-- +goose Down
DROP TABLE ledger_verified;
