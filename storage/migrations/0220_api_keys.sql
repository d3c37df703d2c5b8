-- +goose Up
-- Restricted API keys (issue 35): a backend authenticates as its user,
-- limited to the key's scopes. Only the SHA-256 of the key is kept; prefix is
-- its first characters, shown in the owner's list so a key can be told apart.
-- A revoked key keeps its row (revoked_at) for the record; lookups skip it.
CREATE TABLE api_keys (
    id           text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    key_hash     bytea NOT NULL,
    scopes       text[] NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_hash);
CREATE INDEX api_keys_user_active ON api_keys (user_id, created_at DESC) WHERE revoked_at IS NULL;

-- +goose Down
DROP TABLE api_keys;
