-- +goose Up
-- A paid deposit whose amount or currency does not match is kept in
-- needs_review with what the processor reported paid, so that an admin's
-- review can refuse to credit the expected amount (it can only refund).
ALTER TABLE fiat_deposits ADD COLUMN paid_amount bigint, ADD COLUMN paid_currency text;

-- +goose Down
ALTER TABLE fiat_deposits DROP COLUMN paid_amount, DROP COLUMN paid_currency;
