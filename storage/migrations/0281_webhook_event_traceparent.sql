-- +goose Up
-- The traceparent of the request that caused a webhook event; every
-- delivery attempt sends it in its traceparent header.
ALTER TABLE webhook_events ADD COLUMN traceparent text;

-- +goose Down
ALTER TABLE webhook_events DROP COLUMN traceparent;
