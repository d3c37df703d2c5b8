-- +goose Up
-- Owners manage their endpoints (issue 25): an endpoint can be paused
-- (enabled = false: no new deliveries, queued ones wait), and the delivery
-- log shows how long the last attempt took.
ALTER TABLE webhook_subscriptions ADD COLUMN enabled boolean NOT NULL DEFAULT true;
ALTER TABLE webhook_deliveries ADD COLUMN last_duration_ms integer;
-- The owner's list is newest first by creation time, then id.
CREATE INDEX webhook_subscriptions_user_created ON webhook_subscriptions (user_id, created_at DESC, id DESC);
DROP INDEX webhook_subscriptions_user;

-- +goose Down
CREATE INDEX webhook_subscriptions_user ON webhook_subscriptions (user_id);
DROP INDEX webhook_subscriptions_user_created;
ALTER TABLE webhook_deliveries DROP COLUMN last_duration_ms;
ALTER TABLE webhook_subscriptions DROP COLUMN enabled;
