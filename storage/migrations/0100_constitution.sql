-- +goose Up
-- Constitution scenarios and the planet catalog of published artifacts.
-- Sliders are eight integer columns (0..100) so that planet's `similar` can
-- order by the Euclidean distance in SQL. regime and metrics are the values
-- the server computed from the sliders when the row was written.
CREATE TABLE constitution_scenarios (
    id             text PRIMARY KEY,
    user_id        text NOT NULL,
    title          text NOT NULL,
    floor          smallint NOT NULL CHECK (floor BETWEEN 0 AND 100),
    rule_of_law    smallint NOT NULL CHECK (rule_of_law BETWEEN 0 AND 100),
    rotation       smallint NOT NULL CHECK (rotation BETWEEN 0 AND 100),
    transparency   smallint NOT NULL CHECK (transparency BETWEEN 0 AND 100),
    multi_status   smallint NOT NULL CHECK (multi_status BETWEEN 0 AND 100),
    skin_in_game   smallint NOT NULL CHECK (skin_in_game BETWEEN 0 AND 100),
    polycentricity smallint NOT NULL CHECK (polycentricity BETWEEN 0 AND 100),
    positive_sum   smallint NOT NULL CHECK (positive_sum BETWEEN 0 AND 100),
    regime         text NOT NULL,
    metrics        jsonb NOT NULL,
    tags           text[] NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL
);
CREATE INDEX constitution_scenarios_user ON constitution_scenarios (user_id, id);

CREATE TABLE planet_artifacts (
    id             text PRIMARY KEY,
    user_id        text NOT NULL,
    scenario_id    text,
    title          text NOT NULL,
    floor          smallint NOT NULL CHECK (floor BETWEEN 0 AND 100),
    rule_of_law    smallint NOT NULL CHECK (rule_of_law BETWEEN 0 AND 100),
    rotation       smallint NOT NULL CHECK (rotation BETWEEN 0 AND 100),
    transparency   smallint NOT NULL CHECK (transparency BETWEEN 0 AND 100),
    multi_status   smallint NOT NULL CHECK (multi_status BETWEEN 0 AND 100),
    skin_in_game   smallint NOT NULL CHECK (skin_in_game BETWEEN 0 AND 100),
    polycentricity smallint NOT NULL CHECK (polycentricity BETWEEN 0 AND 100),
    positive_sum   smallint NOT NULL CHECK (positive_sum BETWEEN 0 AND 100),
    regime         text NOT NULL,
    metrics        jsonb NOT NULL,
    tags           text[] NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL
);
CREATE INDEX planet_artifacts_regime ON planet_artifacts (regime, id);

-- One vote per (artifact, user): the primary key makes POST idempotent.
CREATE TABLE planet_votes (
    artifact_id text NOT NULL REFERENCES planet_artifacts (id) ON DELETE CASCADE,
    user_id     text NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (artifact_id, user_id)
);

CREATE TABLE planet_comments (
    id          text PRIMARY KEY,
    artifact_id text NOT NULL REFERENCES planet_artifacts (id) ON DELETE CASCADE,
    user_id     text NOT NULL,
    body        text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
    created_at  timestamptz NOT NULL
);
CREATE INDEX planet_comments_artifact ON planet_comments (artifact_id, id);

-- AI requests per user per calendar month (period = first day, UTC). The
-- counter only moves through one conditional upsert, so concurrent requests
-- never exceed the limit.
CREATE TABLE constitution_ai_usage (
    user_id text NOT NULL,
    period  date NOT NULL,
    used    integer NOT NULL CHECK (used >= 0),
    PRIMARY KEY (user_id, period)
);

-- +goose Down
DROP TABLE constitution_ai_usage;
DROP TABLE planet_comments;
DROP TABLE planet_votes;
DROP TABLE planet_artifacts;
DROP TABLE constitution_scenarios;
