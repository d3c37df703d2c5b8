-- +goose Up
-- What operators decided about records parked on the <topic>.dlq topics.
-- The parked records themselves stay on the broker (the DLQ topics keep
-- them forever and their offsets never change), so this table holds only
-- the decision per record, keyed by its position: it survives restarts,
-- and a record never decided about is simply parked.
CREATE TABLE dlq_decisions (
    record_id  text PRIMARY KEY,          -- <dlq topic>:<partition>:<offset>
    topic      text NOT NULL,             -- the DLQ topic
    part       integer NOT NULL,
    "offset"   bigint NOT NULL,
    state      text NOT NULL CHECK (state IN ('replayed', 'discarded')),
    command_id text NOT NULL DEFAULT '',
    replays    integer NOT NULL DEFAULT 0,
    actor      text NOT NULL,
    decided_at timestamptz NOT NULL
);
CREATE INDEX dlq_decisions_topic ON dlq_decisions (topic, part, "offset");

-- +goose Down
DROP TABLE dlq_decisions;
