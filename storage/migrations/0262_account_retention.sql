-- +goose Up
-- Issue 45: the per-address cap on password-reset mail counts an account's
-- links of the last day, and the retention job prunes what accounts leave
-- behind: ended or expired sessions, old reset links, revoked or expired
-- API keys and counted second-factor attempts.
CREATE INDEX password_resets_user_created ON password_resets (user_id, created_at);
CREATE INDEX password_resets_created ON password_resets (created_at);
CREATE INDEX auth_sessions_finished ON auth_sessions (coalesce(ended_at, expires_at));
CREATE INDEX api_keys_finished ON api_keys (coalesce(revoked_at, expires_at)) WHERE revoked_at IS NOT NULL OR expires_at IS NOT NULL;
CREATE INDEX mfa_attempts_time ON mfa_attempts (attempted_at);

-- +goose Down
DROP INDEX mfa_attempts_time;
DROP INDEX api_keys_finished;
DROP INDEX auth_sessions_finished;
DROP INDEX password_resets_created;
DROP INDEX password_resets_user_created;
