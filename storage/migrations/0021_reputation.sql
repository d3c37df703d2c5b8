-- +goose Up
-- One score per user; rows are updated only by the reputation-applier group,
-- which owns each user's partition of reputation.commands.
CREATE TABLE reputation_scores (
    user_id     text PRIMARY KEY,
    score       bigint NOT NULL,
    rank        text NOT NULL,
    event_count bigint NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX reputation_scores_score ON reputation_scores (score DESC, user_id);

CREATE TABLE reputation_events (
    id            text PRIMARY KEY,
    user_id       text NOT NULL,
    kind          text NOT NULL,
    source_module text NOT NULL,
    weight        bigint NOT NULL,
    source_id     text,
    meta          text,
    score_after   bigint NOT NULL,
    rank_before   text NOT NULL,
    rank_after    text NOT NULL,
    seq           bigint NOT NULL,
    created_at    timestamptz NOT NULL
);
CREATE INDEX reputation_events_user ON reputation_events (user_id, seq DESC);
CREATE INDEX reputation_events_created ON reputation_events (created_at);
-- An emission re-sent with the same source is applied once per user.
CREATE UNIQUE INDEX reputation_events_source ON reputation_events (user_id, kind, source_id)
    WHERE source_id IS NOT NULL;

-- +goose Down
DROP TABLE reputation_events;
DROP TABLE reputation_scores;
