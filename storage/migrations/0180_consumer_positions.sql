-- +goose Up
-- Where each consumer group stands in Postgres itself: the next offset to
-- apply per topic partition, written in the transaction that applies the
-- batch. A group seeks here when it is assigned a partition, so a database
-- restored to an earlier point re-reads what it had not applied (the
-- Kafka group offset stays for tools and lag). One row per partition,
-- updated per batch: kept hot like the other per-batch rows (0134).
CREATE TABLE consumer_positions (
    group_name  text   NOT NULL,
    topic       text   NOT NULL,
    partition   int    NOT NULL,
    next_offset bigint NOT NULL CHECK (next_offset >= 0),
    PRIMARY KEY (group_name, topic, partition)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);

-- Every gap an operator accepted (`--accept-gap`): records a group skipped
-- because they were no longer on the topic. Never updated or deleted.
CREATE TABLE consumer_gap_accepts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    group_name   text        NOT NULL,
    topic        text        NOT NULL,
    partition    int         NOT NULL,
    stored       bigint      NOT NULL,
    resumed_at   bigint      NOT NULL,
    reason       text        NOT NULL,
    accepted_by  text        NOT NULL,
    accepted_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE consumer_gap_accepts;
DROP TABLE consumer_positions;
