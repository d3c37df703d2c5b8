-- Scenarios and artifacts are listed newest first by creation time, then id
-- (a ksuid orders only to the second).
-- +goose Up
DROP INDEX constitution_scenarios_user;
CREATE INDEX constitution_scenarios_user ON constitution_scenarios (user_id, created_at DESC, id DESC);
DROP INDEX planet_artifacts_regime;
CREATE INDEX planet_artifacts_regime ON planet_artifacts (regime, created_at DESC, id DESC);
CREATE INDEX planet_artifacts_created ON planet_artifacts (created_at DESC, id DESC);

-- +goose Down
DROP INDEX planet_artifacts_created;
DROP INDEX planet_artifacts_regime;
CREATE INDEX planet_artifacts_regime ON planet_artifacts (regime, id);
DROP INDEX constitution_scenarios_user;
CREATE INDEX constitution_scenarios_user ON constitution_scenarios (user_id, id);
