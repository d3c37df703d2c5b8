-- +goose Up
-- Virtual payment masks. There is no real card number anywhere in this
-- schema: virtual_pan ("vmask-" + 32 random hex characters) is the only PAN
-- the platform holds, so no endpoint or event can leak real card data.
-- remaining_cents changes only in the mask consumer (consumers/mask), which
-- applies every command of one mask in order.
CREATE TABLE masks (
    id                 text PRIMARY KEY,
    user_id            text NOT NULL,
    label              text NOT NULL DEFAULT '',
    kind               text NOT NULL CHECK (kind IN ('single-use', 'recurring', 'merchant-locked', 'category-locked')),
    locked_to_merchant text NOT NULL DEFAULT '',
    locked_to_category text NOT NULL DEFAULT '',
    currency           text NOT NULL,
    spend_limit_cents  bigint NOT NULL CHECK (spend_limit_cents > 0),
    remaining_cents    bigint NOT NULL CHECK (remaining_cents >= 0 AND remaining_cents <= spend_limit_cents),
    virtual_pan        text NOT NULL CHECK (virtual_pan ~ '^vmask-[0-9a-f]{32}$'),
    status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
    consumed           boolean NOT NULL DEFAULT false,
    expires_at         timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    revoked_at         timestamptz
);
CREATE UNIQUE INDEX masks_virtual_pan ON masks (virtual_pan);
CREATE INDEX masks_user ON masks (user_id, id);

-- Every decided charge, authorized or declined. (mask_id, payment_ref) is
-- unique: a replay finds the first outcome instead of charging twice.
CREATE TABLE mask_charges (
    id                text PRIMARY KEY,
    mask_id           text NOT NULL REFERENCES masks (id),
    user_id           text NOT NULL,
    payment_ref       text NOT NULL,
    amount_cents      bigint NOT NULL CHECK (amount_cents > 0),
    currency          text NOT NULL,
    merchant          text NOT NULL,
    merchant_category text NOT NULL DEFAULT '',
    merchant_user_id  text NOT NULL DEFAULT '',
    status            text NOT NULL CHECK (status IN ('authorized', 'declined')),
    decline_reason    text NOT NULL DEFAULT '',
    risk_score        integer NOT NULL CHECK (risk_score BETWEEN 0 AND 100),
    risk_factors      jsonb NOT NULL,
    remaining_cents   bigint NOT NULL,
    created_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX mask_charges_ref ON mask_charges (mask_id, payment_ref);
-- Velocity and recent-decline lookups of the risk score.
CREATE INDEX mask_charges_recent ON mask_charges (mask_id, status, created_at);
-- Merchants a mask has paid (new-merchant factor of recurring masks).
CREATE INDEX mask_charges_merchant ON mask_charges (mask_id, merchant) WHERE status = 'authorized';
CREATE INDEX mask_charges_user ON mask_charges (user_id, id);

-- +goose Down
DROP TABLE mask_charges;
DROP TABLE masks;
