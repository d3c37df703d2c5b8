-- Partner records are listed newest first by the time the platform received
-- them, then id (a ksuid orders only to the second). Rows recorded before
-- this migration share its time and keep their id order among themselves.
-- +goose Up
ALTER TABLE partner_royalties ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT clock_timestamp();
ALTER TABLE partner_prizes ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT clock_timestamp();
ALTER TABLE partner_cert_payouts ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT clock_timestamp();
CREATE INDEX partner_royalties_recorded ON partner_royalties (email, recorded_at DESC, id DESC);
CREATE INDEX partner_prizes_recorded ON partner_prizes (email, recorded_at DESC, id DESC);
CREATE INDEX partner_cert_payouts_recorded ON partner_cert_payouts (email, recorded_at DESC, id DESC);

-- +goose Down
DROP INDEX partner_cert_payouts_recorded;
DROP INDEX partner_prizes_recorded;
DROP INDEX partner_royalties_recorded;
ALTER TABLE partner_cert_payouts DROP COLUMN recorded_at;
ALTER TABLE partner_prizes DROP COLUMN recorded_at;
ALTER TABLE partner_royalties DROP COLUMN recorded_at;
