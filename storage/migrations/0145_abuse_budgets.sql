-- +goose Up
-- Abuse budgets (schemas/budgets.go): one counter per (budget, scope,
-- subject, window). Scope is 'account', 'ip' or 'global' (subject '' for
-- global); a window is a fixed period start (UTC day or month). Rows of past
-- windows are pruned by storage/budget.Prune.
CREATE TABLE abuse_budgets (
    budget       text        NOT NULL,
    scope        text        NOT NULL,
    subject      text        NOT NULL,
    window_start timestamptz NOT NULL,
    used         bigint      NOT NULL,
    PRIMARY KEY (budget, scope, subject, window_start)
);
CREATE INDEX abuse_budgets_window ON abuse_budgets (window_start);

-- +goose Down
DROP TABLE abuse_budgets;
