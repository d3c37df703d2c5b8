-- +goose Up
-- Masks, mask charges and proposals list newest first by creation time,
-- then id (issue 25); these indexes replace the id-ordered ones.
CREATE INDEX masks_user_created ON masks (user_id, created_at, id);
DROP INDEX masks_user;
CREATE INDEX mask_charges_user_created ON mask_charges (user_id, created_at, id);
DROP INDEX mask_charges_user;
CREATE INDEX gov_proposals_status_created ON gov_proposals (status, created_at, id);
CREATE INDEX gov_proposals_category_created ON gov_proposals (category, created_at, id);
CREATE INDEX gov_proposals_author_created ON gov_proposals (author_user_id, created_at, id);
CREATE INDEX gov_proposals_created ON gov_proposals (created_at, id);
DROP INDEX gov_proposals_status;
DROP INDEX gov_proposals_category;
DROP INDEX gov_proposals_author;

-- +goose Down
CREATE INDEX gov_proposals_author ON gov_proposals (author_user_id, id);
CREATE INDEX gov_proposals_category ON gov_proposals (category, id);
CREATE INDEX gov_proposals_status ON gov_proposals (status, id);
DROP INDEX gov_proposals_created;
DROP INDEX gov_proposals_author_created;
DROP INDEX gov_proposals_category_created;
DROP INDEX gov_proposals_status_created;
CREATE INDEX mask_charges_user ON mask_charges (user_id, id);
DROP INDEX mask_charges_user_created;
CREATE INDEX masks_user ON masks (user_id, id);
DROP INDEX masks_user_created;
