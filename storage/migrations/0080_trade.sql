-- +goose Up
-- Test-net wallet accounts, one per user. balance counts units of 10^-7 TNU
-- (an exact integer; never a float). It changes only in the trade consumer
-- (consumers/trade), which locks the accounts a batch touches in id order.
CREATE TABLE trade_accounts (
    id         text PRIMARY KEY,
    user_id    text NOT NULL,
    currency   text NOT NULL DEFAULT 'TNU',
    balance    bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX trade_accounts_user ON trade_accounts (user_id);

-- Every top-up (from_account NULL) and transfer, amounts in units of 10^-7.
CREATE TABLE trade_operations (
    id           text PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('topup', 'transfer')),
    amount       bigint NOT NULL CHECK (amount > 0),
    from_account text REFERENCES trade_accounts (id),
    to_account   text NOT NULL REFERENCES trade_accounts (id),
    created_at   timestamptz NOT NULL,
    CHECK ((kind = 'topup') = (from_account IS NULL)),
    CHECK (from_account IS DISTINCT FROM to_account)
);
CREATE INDEX trade_operations_from ON trade_operations (from_account, id) WHERE from_account IS NOT NULL;
CREATE INDEX trade_operations_to ON trade_operations (to_account, id);

-- +goose Down
DROP TABLE trade_operations;
DROP TABLE trade_accounts;
