-- +goose Up
-- Who created an account and from where. `platform admin verify` shows it
-- before it makes a self-registered address an admin (anyone can register
-- an address that an allowlist names before its owner does), and `platform
-- admin create` marks the accounts an operator made on the server.
ALTER TABLE users
    ADD COLUMN registered_by text NOT NULL DEFAULT 'self' CHECK (registered_by IN ('self', 'operator')),
    ADD COLUMN registration_ip text;
