-- +goose Up
-- Indexes no query reads (every query under storage/, gateway/, consumers/
-- and cmd/ checked against the migrations' indexes): each cost an index
-- insertion per row on the money path. reputation_events is read by user
-- (reputation_events_user), by source (reputation_events_source) and by id;
-- its time-range reads are in ClickHouse, not here.
DROP INDEX reputation_events_created;

-- +goose Down
CREATE INDEX reputation_events_created ON reputation_events (created_at);
