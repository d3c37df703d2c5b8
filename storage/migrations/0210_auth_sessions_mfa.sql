-- +goose Up
-- One row per login (issue 35): the JWT carries its id (claim sid) and every
-- authenticated request checks that the row is live. ended_at is set by a
-- logout, the end of one or all of a user's sessions, a password change or
-- reset; expires_at is the token's own expiry. last_seen_at is written at
-- most once a minute per session, never on every request.
CREATE TABLE auth_sessions (
    id           text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id),
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    ip           text NOT NULL DEFAULT '',
    user_agent   text NOT NULL DEFAULT '',
    ended_at     timestamptz
);
CREATE INDEX auth_sessions_user_live ON auth_sessions (user_id) WHERE ended_at IS NULL;

-- One-time password-reset links: only the token's SHA-256 is kept; valid 30
-- minutes, used once.
CREATE TABLE password_resets (
    token_hash text PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users (id),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL
);
CREATE INDEX password_resets_user ON password_resets (user_id);

-- TOTP two-factor: the secret sealed (storage/sealed, bound to the user id);
-- enabled once a first code confirmed it; last_step is the newest 30-second
-- step a code was accepted for, so a code is never accepted twice.
CREATE TABLE user_totp (
    user_id      text PRIMARY KEY REFERENCES users (id),
    secret       text NOT NULL,
    confirmed_at timestamptz,
    last_step    bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL
);

-- Recovery codes, each an SHA-256, usable once.
CREATE TABLE user_recovery_codes (
    user_id   text NOT NULL REFERENCES users (id),
    code_hash text NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- +goose Down
DROP TABLE user_recovery_codes;
DROP TABLE user_totp;
DROP TABLE password_resets;
DROP TABLE auth_sessions;
