-- +goose Up
-- A mask-risk-flag the per-IP abuse budget did not let reach the merchant's
-- reputation (issue 34: fraud flags are never dropped silently). The charge
-- stands and its risk score is on the charge row; this is the flag itself,
-- kept for review, with why it was held.
CREATE TABLE mask_held_risk_flags (
    charge_id        text PRIMARY KEY,
    mask_owner       text NOT NULL,
    merchant_user_id text NOT NULL,
    client_ip        text NOT NULL,
    risk_score       integer NOT NULL,
    reason           text NOT NULL, -- the budget scope that was spent: ip
    created_at       timestamptz NOT NULL
);
CREATE INDEX mask_held_risk_flags_merchant ON mask_held_risk_flags (merchant_user_id, created_at);

-- +goose Down
DROP TABLE mask_held_risk_flags;
