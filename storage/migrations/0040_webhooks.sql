-- +goose Up
-- Outbound webhook subscriptions. A user has at most one primary
-- subscription (POST/PATCH /me/webhook) and any number of further ones
-- (POST /webhook-subs). events NULL means all events. The secret is kept in
-- clear because every delivery is signed with it; it is never returned.
CREATE TABLE webhook_subscriptions (
    id         text PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users (id),
    url        text NOT NULL,
    secret     text NOT NULL,
    events     text[],
    is_primary boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX webhook_subscriptions_primary ON webhook_subscriptions (user_id) WHERE is_primary;
CREATE INDEX webhook_subscriptions_user ON webhook_subscriptions (user_id);

-- Events that at least one subscription matched: the delivery payload is
-- rebuilt from here at every attempt (id and data are stable across retries).
CREATE TABLE webhook_events (
    event_id    text PRIMARY KEY,
    type        text NOT NULL,
    module      text NOT NULL,
    data        bytea NOT NULL,
    occurred_at timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- One durable delivery per (subscription, event). status: pending (not yet
-- attempted, or queued again by an admin), failed (an attempt failed, the next
-- is scheduled), delivered, dead_letter (the fifth attempt failed).
-- next_attempt_at is when the scheduler takes it; while an attempt is in
-- flight it holds the lease expiry and claim_token the claimer.
CREATE TABLE webhook_deliveries (
    id               text PRIMARY KEY,
    subscription_id  text NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id         text NOT NULL REFERENCES webhook_events (event_id),
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'failed', 'delivered', 'dead_letter')),
    attempts         integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error       text NOT NULL DEFAULT '',
    next_attempt_at  timestamptz,
    claim_token      text,
    delivered_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (subscription_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, id);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_subscriptions;
