-- +goose Up
CREATE TABLE users (
    id            text PRIMARY KEY,
    email         text NOT NULL,
    name          text NOT NULL DEFAULT '',
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));

-- Every command a consumer applied, with the reply it produced. A redelivered
-- command finds its row and re-sends the stored reply instead of applying
-- again. body is bytea so a replay is byte for byte.
CREATE TABLE processed_commands (
    command_id   text PRIMARY KEY,
    command_type text NOT NULL,
    request_hash text NOT NULL DEFAULT '',
    status       integer NOT NULL,
    body         bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX processed_commands_created_at ON processed_commands (created_at);

-- Events and emissions written in the same transaction as the change that
-- caused them; the relay publishes them in id order and deletes them.
CREATE TABLE outbox (
    id         bigserial PRIMARY KEY,
    topic      text NOT NULL,
    key        text NOT NULL,
    event_type text NOT NULL,
    event_id   text NOT NULL,
    payload    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE outbox;
DROP TABLE processed_commands;
DROP TABLE users;
