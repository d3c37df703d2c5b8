-- +goose Up
-- A committed transfer's transaction row is its processed-command record:
-- ref_id holds the command id (unique among transfers that have one), with the request
-- hash and the balances after the transfer, from which the fiat consumer
-- rebuilds the stored reply. Such a transfer writes no processed_commands
-- row; rejected commands still do. A fiat replay returns the original
-- transaction for as long as it exists (the spec sets no window for fiat).
ALTER TABLE fiat_transactions
    ADD COLUMN request_hash text NOT NULL DEFAULT '',
    ADD COLUMN from_balance bigint NOT NULL DEFAULT 0,
    ADD COLUMN to_balance   bigint NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX fiat_transactions_transfer_command ON fiat_transactions (ref_id) WHERE kind = 'transfer' AND ref_id <> '';

-- +goose Down
DROP INDEX fiat_transactions_transfer_command;
ALTER TABLE fiat_transactions DROP COLUMN request_hash, DROP COLUMN from_balance, DROP COLUMN to_balance;
