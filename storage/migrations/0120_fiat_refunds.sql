-- +goose Up
-- Refunds of merchant charges and paid payment requests. The fiat consumer
-- moves the money back (payee wallet -> paying wallet, no fee) in the batch
-- that holds the charge or request row lock, and keeps the refunded total
-- on that row in the same transaction, so the sum of refunds never exceeds
-- what was paid, also under concurrent refunds (the CHECK is the backstop).
ALTER TABLE fiat_merchant_charges ADD COLUMN refunded bigint NOT NULL DEFAULT 0;
ALTER TABLE fiat_merchant_charges ADD CONSTRAINT fiat_merchant_charges_refunded_check
    CHECK (refunded >= 0 AND refunded <= amount);
ALTER TABLE fiat_payment_requests ADD COLUMN refunded bigint NOT NULL DEFAULT 0;
ALTER TABLE fiat_payment_requests ADD CONSTRAINT fiat_payment_requests_refunded_check
    CHECK (refunded >= 0 AND refunded <= amount);

CREATE TABLE fiat_refunds (
    id               text PRIMARY KEY,
    source           text NOT NULL CHECK (source IN ('charge', 'request')),
    -- The charge id or the payment request id.
    source_id        text NOT NULL,
    request_token    text NOT NULL DEFAULT '',
    refunder_user_id text NOT NULL,
    from_wallet      text NOT NULL,
    to_wallet        text NOT NULL,
    to_user          text NOT NULL,
    amount           bigint NOT NULL CHECK (amount > 0),
    currency         text NOT NULL,
    reason           text NOT NULL DEFAULT '',
    status           text NOT NULL,
    transaction_id   text NOT NULL,
    created_at       timestamptz NOT NULL
);
CREATE INDEX fiat_refunds_source ON fiat_refunds (source, source_id, id);

-- +goose Down
DROP TABLE fiat_refunds;
ALTER TABLE fiat_payment_requests DROP COLUMN refunded;
ALTER TABLE fiat_merchant_charges DROP COLUMN refunded;
