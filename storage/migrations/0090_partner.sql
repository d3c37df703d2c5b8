-- +goose Up
-- Partner rails (rights, chess, cert). Records are kept by the lower-cased
-- e-mail the partner reported, not by user id, so that they belong to
-- whoever holds that e-mail, also when the account is registered later.
-- Nothing here moves money: amounts are integer KZT minor units, counted as
-- earnings only.

-- Royalties reported by the rights partner; one per partner eventId.
CREATE TABLE partner_royalties (
    id          text PRIMARY KEY,
    event_id    text NOT NULL,
    email       text NOT NULL CHECK (email = lower(email)),
    product_key text NOT NULL,
    period      text NOT NULL,
    amount      bigint NOT NULL CHECK (amount > 0),
    paid_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX partner_royalties_event ON partner_royalties (event_id);
CREATE INDEX partner_royalties_email ON partner_royalties (email, id);

-- Podium entries of finalized tournaments; one per (tournament, place, e-mail).
CREATE TABLE partner_prizes (
    id            text PRIMARY KEY,
    tournament_id text NOT NULL,
    place         integer NOT NULL CHECK (place > 0),
    email         text NOT NULL CHECK (email = lower(email)),
    amount        bigint NOT NULL CHECK (amount > 0),
    finalized_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX partner_prizes_entry ON partner_prizes (tournament_id, place, email);
CREATE INDEX partner_prizes_email ON partner_prizes (email, id);

-- Tournaments the chess partner publishes, for the public schedule.
CREATE TABLE partner_tournaments (
    id           text PRIMARY KEY,
    starts_at    timestamptz NOT NULL,
    format       text NOT NULL,
    prize_pool   bigint NOT NULL CHECK (prize_pool > 0),
    capacity     integer NOT NULL CHECK (capacity > 0),
    entries      integer NOT NULL CHECK (entries >= 0 AND entries <= capacity),
    published_at timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX partner_tournaments_open ON partner_tournaments (starts_at, id) WHERE entries < capacity;

-- Certification payouts reported by the cert partner; one per eventId.
CREATE TABLE partner_cert_payouts (
    id                  text PRIMARY KEY,
    event_id            text NOT NULL,
    email               text NOT NULL CHECK (email = lower(email)),
    artifact_version_id text NOT NULL,
    amount              bigint NOT NULL CHECK (amount > 0),
    certified_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX partner_cert_payouts_event ON partner_cert_payouts (event_id);
CREATE INDEX partner_cert_payouts_email ON partner_cert_payouts (email, id);

-- +goose Down
DROP TABLE partner_cert_payouts;
DROP TABLE partner_tournaments;
DROP TABLE partner_prizes;
DROP TABLE partner_royalties;
