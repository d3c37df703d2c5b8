-- +goose Up
-- The install's own salt and the fingerprints of its keys (issue 34).
-- install_salt keys the fingerprints below and the master key ids stored
-- beside sealed values (storage/sealed), so that neither can be matched
-- against guesses computed once for every install. It is made at the first
-- start after this migration and never changes.
CREATE TABLE install_salt (
    id         boolean PRIMARY KEY DEFAULT true CHECK (id),
    salt       bytea NOT NULL CHECK (length(salt) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- HMAC-SHA256(install_salt, variable, key) of DATA_ENCRYPTION_KEY,
-- SIGNING_MASTER_KEY and LEDGER_SALT as first started with (the key that
-- seals, for a "new,old" list): a production start with another key is
-- refused instead of sealing, signing or chaining with it.
CREATE TABLE key_fingerprints (
    variable    text PRIMARY KEY,
    fingerprint text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE key_fingerprints;
DROP TABLE install_salt;
