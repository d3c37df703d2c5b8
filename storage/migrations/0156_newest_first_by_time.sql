-- +goose Up
-- "Newest first" lists order by creation time (microseconds), then id: ids
-- are ksuids, whose time part has one-second resolution (issue 25). The
-- new indexes serve the same per-user lookups the id-ordered ones did.
CREATE INDEX fiat_transactions_from_user_created ON fiat_transactions (from_user, created_at, id) WHERE from_user <> '';
CREATE INDEX fiat_transactions_to_user_created ON fiat_transactions (to_user, created_at, id) WHERE to_user <> '';
DROP INDEX fiat_transactions_from_user;
DROP INDEX fiat_transactions_to_user;
CREATE INDEX trade_operations_from_created ON trade_operations (from_account, created_at, id) WHERE from_account IS NOT NULL;
CREATE INDEX trade_operations_to_created ON trade_operations (to_account, created_at, id);
DROP INDEX trade_operations_from;
DROP INDEX trade_operations_to;

-- +goose Down
CREATE INDEX trade_operations_to ON trade_operations (to_account, id);
CREATE INDEX trade_operations_from ON trade_operations (from_account, id) WHERE from_account IS NOT NULL;
DROP INDEX trade_operations_to_created;
DROP INDEX trade_operations_from_created;
CREATE INDEX fiat_transactions_to_user ON fiat_transactions (to_user, id) WHERE to_user <> '';
CREATE INDEX fiat_transactions_from_user ON fiat_transactions (from_user, id) WHERE from_user <> '';
DROP INDEX fiat_transactions_to_user_created;
DROP INDEX fiat_transactions_from_user_created;
