-- +goose Up
-- Issue 34: what the retention job now prunes, and the per-address cap on
-- verification mail.
-- Verification links are counted per address (lower-cased) over the last
-- day, and pruned a week after they were made.
CREATE INDEX email_verifications_address ON email_verifications (lower(email), created_at);
CREATE INDEX email_verifications_created ON email_verifications (created_at);
-- A withdrawal's destination is kept while its withdrawal exists; one the
-- applier refused (no transaction names it) is pruned.
CREATE INDEX fiat_transactions_withdrawal_ref ON fiat_transactions (ref_id) WHERE kind = 'withdrawal';
CREATE INDEX fiat_withdrawal_destinations_created ON fiat_withdrawal_destinations (created_at);
-- Finished deliveries (delivered, dead_letter) are pruned after their
-- retention, then the events no delivery names any more.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status IN ('delivered', 'dead_letter');
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- +goose Down
DROP INDEX webhook_deliveries_event;
DROP INDEX webhook_deliveries_finished;
DROP INDEX fiat_withdrawal_destinations_created;
DROP INDEX fiat_transactions_withdrawal_ref;
DROP INDEX email_verifications_created;
DROP INDEX email_verifications_address;
