-- +goose Up
-- Fiat wallets: the ledger of record for money. balance changes only in the
-- fiat consumer (consumers/fiat), inside a batch that locked the rows.
CREATE TABLE fiat_wallets (
    id         text PRIMARY KEY,
    user_id    text NOT NULL,
    currency   text NOT NULL CHECK (currency IN ('KZT', 'USD')),
    balance    bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'frozen', 'deleted')),
    kind       text NOT NULL DEFAULT 'user' CHECK (kind IN ('user', 'fee')),
    created_at timestamptz NOT NULL DEFAULT now()
);
-- One wallet per currency per user.
CREATE UNIQUE INDEX fiat_wallets_user_currency ON fiat_wallets (user_id, currency);

-- The platform fee wallets, one per currency, owned by a pseudo user that
-- cannot log in (it has no users row).
INSERT INTO fiat_wallets (id, user_id, currency, kind) VALUES
    ('fee-KZT', 'platform-fees', 'KZT', 'fee'),
    ('fee-USD', 'platform-fees', 'USD', 'fee');

-- Every money movement. A transfer is one row seen by both sides.
CREATE TABLE fiat_transactions (
    id          text PRIMARY KEY,
    kind        text NOT NULL,
    status      text NOT NULL,
    from_wallet text NOT NULL DEFAULT '',
    to_wallet   text NOT NULL DEFAULT '',
    from_user   text NOT NULL DEFAULT '',
    to_user     text NOT NULL DEFAULT '',
    amount      bigint NOT NULL,
    fee         bigint NOT NULL DEFAULT 0,
    currency    text NOT NULL,
    memo        text NOT NULL DEFAULT '',
    ref_id      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL
);
CREATE INDEX fiat_transactions_from_user ON fiat_transactions (from_user, id) WHERE from_user <> '';
CREATE INDEX fiat_transactions_to_user ON fiat_transactions (to_user, id) WHERE to_user <> '';

-- Checkout sessions of the card processor and their outcome.
CREATE TABLE fiat_deposits (
    id              text PRIMARY KEY,
    user_id         text NOT NULL,
    wallet_id       text NOT NULL REFERENCES fiat_wallets (id),
    amount          bigint NOT NULL CHECK (amount > 0),
    currency        text NOT NULL,
    session_id      text NOT NULL UNIQUE,
    url             text NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    event_id        text NOT NULL DEFAULT '',
    transaction_id  text NOT NULL DEFAULT '',
    ledger_entry_id text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    completed_at    timestamptz
);
CREATE INDEX fiat_deposits_user ON fiat_deposits (user_id, id);
CREATE INDEX fiat_deposits_user_created ON fiat_deposits (user_id, created_at);

-- Bank payouts awaiting admin review; the funds are held (debited) at once.
CREATE TABLE fiat_payouts (
    id             text PRIMARY KEY,
    user_id        text NOT NULL,
    wallet_id      text NOT NULL REFERENCES fiat_wallets (id),
    amount         bigint NOT NULL CHECK (amount > 0),
    currency       text NOT NULL,
    bank_account   text NOT NULL,
    status         text NOT NULL,
    transaction_id text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    decided_at     timestamptz
);
CREATE INDEX fiat_payouts_user ON fiat_payouts (user_id, id);

-- KYC submissions.
CREATE TABLE fiat_kyc (
    id              text PRIMARY KEY,
    user_id         text NOT NULL,
    full_name       text NOT NULL,
    document_type   text NOT NULL,
    document_number text NOT NULL,
    country         text NOT NULL,
    status          text NOT NULL,
    created_at      timestamptz NOT NULL,
    decided_at      timestamptz
);
CREATE INDEX fiat_kyc_user ON fiat_kyc (user_id, id);

-- Per-user limit state: KYC approval (written by the admin/KYC handlers) and
-- the outgoing total of the current month (written by the consumer only).
CREATE TABLE fiat_limits (
    user_id      text PRIMARY KEY,
    kyc_approved boolean NOT NULL DEFAULT false,
    month        text NOT NULL DEFAULT '',
    month_out    bigint NOT NULL DEFAULT 0
);

-- Append-only audit of admin actions and money movements.
CREATE TABLE fiat_audit (
    id         text PRIMARY KEY,
    actor      text NOT NULL DEFAULT '',
    action     text NOT NULL,
    subject    text NOT NULL DEFAULT '',
    amount     bigint NOT NULL DEFAULT 0,
    currency   text NOT NULL DEFAULT '',
    detail     text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION fiat_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fiat_audit is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER fiat_audit_no_change BEFORE UPDATE OR DELETE ON fiat_audit
    FOR EACH ROW EXECUTE FUNCTION fiat_audit_append_only();

-- +goose Down
DROP TRIGGER fiat_audit_no_change ON fiat_audit;
DROP FUNCTION fiat_audit_append_only();
DROP TABLE fiat_audit;
DROP TABLE fiat_limits;
DROP TABLE fiat_kyc;
DROP TABLE fiat_payouts;
DROP TABLE fiat_deposits;
DROP TABLE fiat_transactions;
DROP TABLE fiat_wallets;
