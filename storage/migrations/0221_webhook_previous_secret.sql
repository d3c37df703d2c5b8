-- +goose Up
-- Webhook secret rotation with an overlap (issue 35): after a rotation the
-- previous secret (sealed like secret) still signs deliveries beside the new
-- one until previous_secret_expires_at, so a receiver can switch secrets
-- without refusing a delivery.
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret text,
    ADD COLUMN previous_secret_expires_at timestamptz;

-- +goose Down
ALTER TABLE webhook_subscriptions DROP COLUMN previous_secret, DROP COLUMN previous_secret_expires_at;
