-- +goose Up
-- Every campaign holds its donations in its own platform-held KZT wallet
-- (kind 'campaign', id 'campaign-<campaign id>', owned by the pseudo user
-- 'campaign:<campaign id>' that cannot log in). Its balance changes only in
-- the fiat consumer, by one additive credit per batch.
ALTER TABLE fiat_wallets DROP CONSTRAINT fiat_wallets_kind_check;
ALTER TABLE fiat_wallets ADD CONSTRAINT fiat_wallets_kind_check CHECK (kind IN ('user', 'fee', 'campaign'));

-- Campaigns. Written by the gateway (create, approve), except raised_kzt
-- and goal_reached_at, which only the fiat consumer changes, in the same
-- statement that adds a batch's donations: the row lock of that update is
-- what makes campaign.goal_reached fire exactly once.
CREATE TABLE charity_campaigns (
    id               text PRIMARY KEY,
    proposer_user_id text NOT NULL,
    title            text NOT NULL,
    description      text NOT NULL,
    category         text NOT NULL,
    goal_kzt         bigint NOT NULL CHECK (goal_kzt > 0),
    media            jsonb NOT NULL DEFAULT '[]',
    ends_at          timestamptz,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active')),
    pinned           boolean NOT NULL DEFAULT false,
    featured         boolean NOT NULL DEFAULT false,
    wallet_id        text NOT NULL REFERENCES fiat_wallets (id),
    raised_kzt       bigint NOT NULL DEFAULT 0 CHECK (raised_kzt >= 0),
    goal_reached_at  timestamptz,
    created_at       timestamptz NOT NULL,
    approved_at      timestamptz
);
-- The public list: approved campaigns, pinned first, newest first.
CREATE INDEX charity_campaigns_list ON charity_campaigns (status, pinned DESC, id DESC);
CREATE INDEX charity_campaigns_proposer ON charity_campaigns (proposer_user_id, id);

-- Donations, inserted by the fiat consumer in the batch that moved the money.
CREATE TABLE charity_donations (
    id              text PRIMARY KEY,
    campaign_id     text NOT NULL REFERENCES charity_campaigns (id),
    donor_user_id   text NOT NULL,
    wallet_id       text NOT NULL,
    amount_kzt      bigint NOT NULL CHECK (amount_kzt > 0),
    anonymous       boolean NOT NULL,
    message         text NOT NULL DEFAULT '',
    transaction_id  text NOT NULL UNIQUE,
    ledger_entry_id text NOT NULL UNIQUE,
    created_at      timestamptz NOT NULL
);
CREATE INDEX charity_donations_campaign ON charity_donations (campaign_id, created_at DESC, id DESC);
CREATE INDEX charity_donations_donors ON charity_donations (campaign_id, donor_user_id);

-- +goose Down
DROP TABLE charity_donations;
DROP TABLE charity_campaigns;
DELETE FROM fiat_wallets WHERE kind = 'campaign';
ALTER TABLE fiat_wallets DROP CONSTRAINT fiat_wallets_kind_check;
ALTER TABLE fiat_wallets ADD CONSTRAINT fiat_wallets_kind_check CHECK (kind IN ('user', 'fee'));
