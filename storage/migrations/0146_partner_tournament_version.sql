-- +goose Up
-- The chess partner's version of a tournament (its body's optional
-- `version`): an update carrying an older version than the stored one never
-- overwrites it (storage/partner.PublishTournament). 0 = unversioned, which
-- keeps last-write-wins only while no versioned update has been stored.
ALTER TABLE partner_tournaments ADD COLUMN version bigint NOT NULL DEFAULT 0 CHECK (version >= 0);

-- +goose Down
ALTER TABLE partner_tournaments DROP COLUMN version;
