-- +goose Up
-- Merchant API keys: only the SHA-256 of the key is stored; the plaintext is
-- shown once at creation. A user holds at most 3 active keys (checked under
-- a lock of the user's key rows by the gateway).
CREATE TABLE fiat_merchant_keys (
    id         text PRIMARY KEY,
    user_id    text NOT NULL,
    label      text NOT NULL DEFAULT '',
    key_hash   text NOT NULL UNIQUE,
    key_prefix text NOT NULL,
    status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX fiat_merchant_keys_user ON fiat_merchant_keys (user_id, id);

-- A customer's standing authorization (a debit mandate) for one merchant to
-- charge one wallet, up to remaining minor units in total. The fiat consumer
-- decrements remaining as charges settle.
CREATE TABLE fiat_merchant_authorizations (
    id               text PRIMARY KEY,
    wallet_id        text NOT NULL REFERENCES fiat_wallets (id),
    customer_user_id text NOT NULL,
    merchant_user_id text NOT NULL,
    max_amount       bigint NOT NULL CHECK (max_amount > 0),
    remaining        bigint NOT NULL CHECK (remaining >= 0),
    status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
    created_at       timestamptz NOT NULL,
    revoked_at       timestamptz
);
CREATE UNIQUE INDEX fiat_merchant_authorizations_active ON fiat_merchant_authorizations (wallet_id, merchant_user_id)
    WHERE status = 'active';
CREATE INDEX fiat_merchant_authorizations_customer ON fiat_merchant_authorizations (customer_user_id, id);

-- Settled merchant charges; (merchant, paymentRef) is unique so a replay
-- after the 24 h command-idempotency window still returns the original.
CREATE TABLE fiat_merchant_charges (
    id               text PRIMARY KEY,
    merchant_user_id text NOT NULL,
    merchant_key_id  text NOT NULL,
    payment_ref      text NOT NULL,
    customer_wallet  text NOT NULL,
    merchant_wallet  text NOT NULL,
    authorization_id text NOT NULL,
    amount           bigint NOT NULL CHECK (amount > 0),
    fee              bigint NOT NULL,
    currency         text NOT NULL,
    description      text NOT NULL DEFAULT '',
    transaction_id   text NOT NULL,
    created_at       timestamptz NOT NULL,
    UNIQUE (merchant_user_id, payment_ref)
);

-- Payment requests with a shareable token. status: open → paid | expired.
CREATE TABLE fiat_payment_requests (
    id             text PRIMARY KEY,
    token          text NOT NULL UNIQUE,
    user_id        text NOT NULL,
    wallet_id      text NOT NULL REFERENCES fiat_wallets (id),
    amount         bigint NOT NULL CHECK (amount > 0),
    currency       text NOT NULL,
    description    text NOT NULL DEFAULT '',
    status         text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid', 'expired')),
    views          integer NOT NULL DEFAULT 0,
    max_views      integer NOT NULL CHECK (max_views > 0),
    expires_at     timestamptz NOT NULL,
    created_at     timestamptz NOT NULL,
    paid_at        timestamptz,
    payer_wallet   text NOT NULL DEFAULT '',
    payer_user     text NOT NULL DEFAULT '',
    transaction_id text NOT NULL DEFAULT '',
    expired_at     timestamptz,
    expired_reason text NOT NULL DEFAULT ''
);
-- The expirer scans open requests by expiry; the dashboard lists a user's open ones.
CREATE INDEX fiat_payment_requests_open_expiry ON fiat_payment_requests (expires_at) WHERE status = 'open';
CREATE INDEX fiat_payment_requests_user_open ON fiat_payment_requests (user_id, id) WHERE status = 'open';

-- +goose Down
DROP TABLE fiat_payment_requests;
DROP TABLE fiat_merchant_charges;
DROP TABLE fiat_merchant_authorizations;
DROP TABLE fiat_merchant_keys;
