-- +goose Up
-- The W3C traceparent of the request that caused each event, aligned with
-- event_ids; NULL for rows written before, or with no traced event. The
-- relay sends it as the record's traceparent header, so one trace follows
-- a request from the gateway through the outbox to the ledger and webhooks.
ALTER TABLE event_log ADD COLUMN traceparents text[];

-- +goose Down
ALTER TABLE event_log DROP COLUMN traceparents;
