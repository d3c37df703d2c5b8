-- +goose Up
-- A handful of rows take an update per transfer or per batch: wallet
-- balances, monthly limits, reputation scores, the ledger head and the relay
-- cursor. In a 10-minute soak, fiat_wallets (102 rows) grew from 1.5 MB at
-- minute 3 to 2.6 MB at minute 7 and the batch's wallet UPDATE from 429 to
-- 567 µs a call: dead versions piled up between autovacuum visits, which by
-- default wait for 20% of the table plus 50 rows to be dead. These tables are
-- tiny, so they are vacuumed after a fixed number of dead rows, without cost
-- delays, and keep half of each page free so that most updates stay on their
-- page (HOT: no new index entry). Measured with this (and a 10 s autovacuum
-- naptime on the local stack): 284 and 337 µs at minutes 3 and 7.
ALTER TABLE fiat_wallets SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE fiat_limits SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE reputation_scores SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE ledger_head SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE event_log_cursor SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);

-- +goose Down
ALTER TABLE fiat_wallets RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
ALTER TABLE fiat_limits RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
ALTER TABLE reputation_scores RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
ALTER TABLE ledger_head RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
ALTER TABLE event_log_cursor RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
