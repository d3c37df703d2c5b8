-- +goose Up
-- A paid event for a deposit that is no longer pending (a processor's
-- second charge) is kept as a deposit row of its own in needs_review, with
-- what was paid and the deposit it paid again (payment_of), so that an
-- admin can refund it once; it is never credited.
ALTER TABLE fiat_deposits ADD COLUMN payment_of text;

-- +goose Down
ALTER TABLE fiat_deposits DROP COLUMN payment_of;
