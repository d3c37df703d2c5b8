-- +goose Up
-- Admin rights follow a verified e-mail: an allow-listed address confers the
-- role only once its owner proved they receive mail there.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;

-- One-time verification links. Only the SHA-256 of the token is kept, so the
-- table cannot be used to verify an address.
CREATE TABLE email_verifications (
    token_hash text PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users (id),
    email      text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_verifications_user ON email_verifications (user_id);

-- +goose Down
DROP TABLE email_verifications;
ALTER TABLE users DROP COLUMN email_verified_at;
