-- +goose Up
-- Single-use tickets of the admin event stream: EventSource cannot send an
-- Authorization header, and the long-lived bearer token must never appear
-- in a URL (proxies and access logs keep URLs). An admin mints a ticket
-- (POST /api/fiat/admin/events/ticket) that works once within a minute;
-- only its SHA-256 is kept, so any gateway can redeem it.
CREATE TABLE stream_tickets (
    token_hash text PRIMARY KEY,
    user_id    text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX stream_tickets_expires ON stream_tickets (expires_at);
