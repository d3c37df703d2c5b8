-- +goose Up
-- A stream ticket stands for the login session that minted it: a ticket of
-- a session that ended opens nothing (issue 35).
ALTER TABLE stream_tickets ADD COLUMN session_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE stream_tickets DROP COLUMN session_id;
