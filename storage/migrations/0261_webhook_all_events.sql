-- +goose Up
-- The all-events audience is a property of how a subscription was made
-- (issue 45): only a fiat admin's login session (with two-factor in
-- production), never an API key, makes one. Existing subscriptions cannot
-- show how they were made, so none keeps it: an admin saves the endpoint
-- again from a login session to receive every event again.
ALTER TABLE webhook_subscriptions ADD COLUMN all_events boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE webhook_subscriptions DROP COLUMN all_events;
