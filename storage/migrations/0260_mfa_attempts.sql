-- +goose Up
-- Second-factor attempts per account (issue 45): every attempt at a TOTP or
-- recovery code takes a row before the code is checked, and a right code
-- gives its row back, so what stays is the wrong ones. An account with 5 in
-- the last 15 minutes is refused (429 with Retry-After) whatever the code,
-- also under parallel guesses. Rows older than the window are pruned.
CREATE TABLE mfa_attempts (
    id           bigserial PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL
);
CREATE INDEX mfa_attempts_user_time ON mfa_attempts (user_id, attempted_at);

-- +goose Down
DROP TABLE mfa_attempts;
