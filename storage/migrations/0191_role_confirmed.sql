-- +goose Up
-- An allow-listed address confers its admin role only on an account an
-- operator made or confirmed on the server (`platform admin create`, or
-- `platform admin verify`): anyone can register an address before its
-- owner, and the web verification link proves only that the mailbox
-- answered (a scanner that pre-fetches links answers too). Accounts an
-- operator created keep their role; a self-registered account verified
-- through the web before this needs `platform admin verify` again.
ALTER TABLE users ADD COLUMN role_confirmed_at timestamptz;
UPDATE users SET role_confirmed_at = email_verified_at
WHERE registered_by = 'operator' AND email_verified_at IS NOT NULL;

-- +goose Down
ALTER TABLE users DROP COLUMN role_confirmed_at;
