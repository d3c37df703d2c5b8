-- +goose Up
-- Users' Ed25519 signing keys. The private key (its 32-byte seed) is stored
-- only sealed with AEAD under a key derived from SIGNING_MASTER_KEY;
-- master_key_id names which master key sealed it (a derived fingerprint,
-- never the key), so the master key can rotate. A user has at most one
-- active key; rotated keys stay (status retired) and stay published, so
-- signatures made with them remain verifiable.
CREATE TABLE sign_keys (
    id             text PRIMARY KEY,
    user_id        text NOT NULL,
    public_key     bytea NOT NULL CHECK (length(public_key) = 32),
    sealed_seed    bytea NOT NULL,
    nonce          bytea NOT NULL,
    master_key_id  text NOT NULL,
    status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
    created_at     timestamptz NOT NULL,
    retired_at     timestamptz
);
CREATE UNIQUE INDEX sign_keys_active_user ON sign_keys (user_id) WHERE status = 'active';
CREATE INDEX sign_keys_user ON sign_keys (user_id, id);

-- Every signing: the signature string, the SHA-256 (hex) of the canonical
-- payload and the canonical payload itself (RFC 8785 bytes).
CREATE TABLE sign_signatures (
    id                text PRIMARY KEY,
    key_id            text NOT NULL REFERENCES sign_keys (id),
    user_id           text NOT NULL,
    signature         text NOT NULL,
    payload_digest    text NOT NULL CHECK (payload_digest ~ '^[0-9a-f]{64}$'),
    canonical_payload bytea NOT NULL,
    created_at        timestamptz NOT NULL
);
CREATE INDEX sign_signatures_signature ON sign_signatures (signature);
CREATE INDEX sign_signatures_user ON sign_signatures (user_id, id);

-- +goose Down
DROP TABLE sign_signatures;
DROP TABLE sign_keys;
