-- +goose Up
-- Withdrawal destinations (IBANs) sealed at rest like payout bank accounts:
-- the gateway seals the destination (AES-256-GCM under DATA_ENCRYPTION_KEY,
-- bound to "withdrawal:<withdrawalId>") into this table; transaction memos
-- and the audit show only its hint (****1234).
--
-- Rows written before this migration hold the destination in clear in
-- fiat_transactions.memo and fiat_audit.detail. Sealing needs the key, which
-- SQL does not have: `platform migrate` (and `platform run`) seal them right
-- after goose, in Go (storage/fiat.SealLegacyWithdrawals, idempotent: a
-- withdrawal with a row here is done).
CREATE TABLE fiat_withdrawal_destinations (
    withdrawal_id      text PRIMARY KEY,
    user_id            text NOT NULL,
    destination_sealed text NOT NULL,
    hint               text NOT NULL,
    created_at         timestamptz NOT NULL
);

-- +goose Down
DROP TABLE fiat_withdrawal_destinations;
