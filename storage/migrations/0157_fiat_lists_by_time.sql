-- +goose Up
-- The rest of fiat's newest-first lists order by creation time, then id
-- (issue 25); these indexes serve them as the id-ordered ones did.
CREATE INDEX fiat_deposits_status_created ON fiat_deposits (status, created_at, id);
CREATE INDEX fiat_audit_created ON fiat_audit (created_at, id);
CREATE INDEX fiat_merchant_authorizations_customer_created ON fiat_merchant_authorizations (customer_user_id, created_at, id);
DROP INDEX fiat_merchant_authorizations_customer;
CREATE INDEX fiat_payment_requests_user_open_created ON fiat_payment_requests (user_id, created_at, id) WHERE status = 'open';
DROP INDEX fiat_payment_requests_user_open;

-- +goose Down
CREATE INDEX fiat_payment_requests_user_open ON fiat_payment_requests (user_id, id) WHERE status = 'open';
DROP INDEX fiat_payment_requests_user_open_created;
CREATE INDEX fiat_merchant_authorizations_customer ON fiat_merchant_authorizations (customer_user_id, id);
DROP INDEX fiat_merchant_authorizations_customer_created;
DROP INDEX fiat_audit_created;
DROP INDEX fiat_deposits_status_created;
