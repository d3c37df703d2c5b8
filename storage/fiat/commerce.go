package fiat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	spipeline "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// ErrKeyLimit means the user already holds the maximum of active keys.
var ErrKeyLimit = errors.New("active merchant key limit reached")

// MerchantKey is a merchant API key row (the plaintext is never stored).
type MerchantKey struct {
	ID        string
	UserID    string
	Label     string
	Hash      string
	Prefix    string
	Status    string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Authorization is a customer's standing authorization of a merchant to
// charge a wallet up to Remaining minor units in total.
type Authorization struct {
	ID             string
	WalletID       string
	CustomerUserID string
	MerchantUserID string
	MaxAmount      int64
	Remaining      int64
	Status         string
	CreatedAt      time.Time
	RevokedAt      *time.Time
}

// Charge is a settled merchant charge.
type Charge struct {
	ID              string
	MerchantUserID  string
	MerchantKeyID   string
	PaymentRef      string
	CustomerWallet  string
	MerchantWallet  string
	AuthorizationID string
	Amount          int64
	Fee             int64
	Currency        string
	Description     string
	TransactionID   string
	CreatedAt       time.Time
}

// PaymentRequest is a payment request row.
type PaymentRequest struct {
	ID            string
	Token         string
	UserID        string
	WalletID      string
	Amount        int64
	Currency      string
	Description   string
	Status        string
	Views         int
	MaxViews      int
	ExpiresAt     time.Time
	CreatedAt     time.Time
	PaidAt        *time.Time
	PayerWallet   string
	PayerUser     string
	TransactionID string
	ExpiredAt     *time.Time
	ExpiredReason string
}

const keyCols = `id, user_id, label, key_hash, key_prefix, status, created_at, revoked_at`

func scanKey(row pgx.CollectableRow) (MerchantKey, error) {
	var k MerchantKey
	err := row.Scan(&k.ID, &k.UserID, &k.Label, &k.Hash, &k.Prefix, &k.Status, &k.CreatedAt, &k.RevokedAt)
	return k, err
}

// CreateMerchantKey inserts an active key unless the user already holds max
// active ones (ErrKeyLimit). A per-user advisory lock serialises concurrent
// creations so the limit holds under races.
func (s *Store) CreateMerchantKey(ctx context.Context, k MerchantKey, max int) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('fiat_merchant_keys:' || $1))`, k.UserID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM fiat_merchant_keys WHERE user_id = $1 AND status = 'active'`,
			k.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrKeyLimit
		}
		_, err := tx.Exec(ctx, `INSERT INTO fiat_merchant_keys (id, user_id, label, key_hash, key_prefix, status, created_at)
			VALUES ($1, $2, $3, $4, $5, 'active', $6)`, k.ID, k.UserID, k.Label, k.Hash, k.Prefix, k.CreatedAt)
		return err
	})
	if err != nil {
		return fmt.Errorf("create merchant key: %w", postgres.Translate(err))
	}
	return nil
}

// MerchantKeysOf lists a user's keys, newest first.
func (s *Store) MerchantKeysOf(ctx context.Context, userID string) ([]MerchantKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyCols+` FROM fiat_merchant_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC`, userID)
	if err != nil {
		return nil, fmt.Errorf("list merchant keys: %w", err)
	}
	ks, err := pgx.CollectRows(rows, scanKey)
	if err != nil {
		return nil, fmt.Errorf("list merchant keys: %w", err)
	}
	return ks, nil
}

// MerchantKeyByHash returns the key with the SHA-256 hash (any status).
func (s *Store) MerchantKeyByHash(ctx context.Context, hash string) (MerchantKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyCols+` FROM fiat_merchant_keys WHERE key_hash = $1`, hash)
	if err != nil {
		return MerchantKey{}, fmt.Errorf("find merchant key: %w", err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if err != nil {
		return MerchantKey{}, fmt.Errorf("find merchant key: %w", postgres.Translate(err))
	}
	return k, nil
}

// MerchantKey returns a key by id (postgres.ErrNotFound when unknown).
func (s *Store) MerchantKey(ctx context.Context, id string) (MerchantKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyCols+` FROM fiat_merchant_keys WHERE id = $1`, id)
	if err != nil {
		return MerchantKey{}, fmt.Errorf("find merchant key: %w", err)
	}
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if err != nil {
		return MerchantKey{}, fmt.Errorf("find merchant key %s: %w", id, postgres.Translate(err))
	}
	return k, nil
}

// RevokeMerchantKey revokes the user's key (postgres.ErrNotFound when the key
// is unknown or another user's). Revoking a revoked key keeps its first
// revocation time.
func (s *Store) RevokeMerchantKey(ctx context.Context, userID, id string, now time.Time, audit AuditRow) (MerchantKey, error) {
	var k MerchantKey
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE fiat_merchant_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, $3)
			WHERE id = $1 AND user_id = $2 RETURNING `+keyCols, id, userID, now)
		if err != nil {
			return err
		}
		if k, err = pgx.CollectExactlyOneRow(rows, scanKey); err != nil {
			return postgres.Translate(err)
		}
		return InsertAudit(ctx, tx, []AuditRow{audit})
	})
	if err != nil {
		return MerchantKey{}, fmt.Errorf("revoke merchant key %s: %w", id, err)
	}
	return k, nil
}

const authCols = `id, wallet_id, customer_user_id, merchant_user_id, max_amount, remaining, status, created_at, revoked_at`

func scanAuth(row pgx.CollectableRow) (Authorization, error) {
	var a Authorization
	err := row.Scan(&a.ID, &a.WalletID, &a.CustomerUserID, &a.MerchantUserID, &a.MaxAmount, &a.Remaining, &a.Status,
		&a.CreatedAt, &a.RevokedAt)
	return a, err
}

// CreateAuthorization stores a new active authorization, revoking the
// previous active one of the same (wallet, merchant) in the same
// transaction: a customer raises or lowers a mandate by issuing a new one.
func (s *Store) CreateAuthorization(ctx context.Context, a Authorization, audit AuditRow) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE fiat_merchant_authorizations SET status = 'revoked', revoked_at = $3
			WHERE wallet_id = $1 AND merchant_user_id = $2 AND status = 'active'`, a.WalletID, a.MerchantUserID, a.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO fiat_merchant_authorizations (`+authCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, NULL)`, a.ID, a.WalletID, a.CustomerUserID, a.MerchantUserID,
			a.MaxAmount, a.Remaining, a.CreatedAt); err != nil {
			return err
		}
		return InsertAudit(ctx, tx, []AuditRow{audit})
	})
	if err != nil {
		return fmt.Errorf("create merchant authorization: %w", postgres.Translate(err))
	}
	return nil
}

// AuthorizationsOf lists a customer's authorizations, newest first.
func (s *Store) AuthorizationsOf(ctx context.Context, customerUserID string) ([]Authorization, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+authCols+` FROM fiat_merchant_authorizations
		WHERE customer_user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 200`, customerUserID)
	if err != nil {
		return nil, fmt.Errorf("list authorizations: %w", err)
	}
	as, err := pgx.CollectRows(rows, scanAuth)
	if err != nil {
		return nil, fmt.Errorf("list authorizations: %w", err)
	}
	return as, nil
}

// ActiveAuthorization returns the active authorization of the merchant on
// the wallet (postgres.ErrNotFound when there is none).
func (s *Store) ActiveAuthorization(ctx context.Context, walletID, merchantUserID string) (Authorization, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+authCols+` FROM fiat_merchant_authorizations
		WHERE wallet_id = $1 AND merchant_user_id = $2 AND status = 'active'`, walletID, merchantUserID)
	if err != nil {
		return Authorization{}, fmt.Errorf("find authorization: %w", err)
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanAuth)
	if err != nil {
		return Authorization{}, fmt.Errorf("find authorization: %w", postgres.Translate(err))
	}
	return a, nil
}

// RevokeAuthorization revokes the customer's authorization
// (postgres.ErrNotFound when unknown or another user's).
func (s *Store) RevokeAuthorization(ctx context.Context, customerUserID, id string, now time.Time) (Authorization, error) {
	rows, err := s.pool.Query(ctx, `UPDATE fiat_merchant_authorizations SET status = 'revoked', revoked_at = coalesce(revoked_at, $3)
		WHERE id = $1 AND customer_user_id = $2 RETURNING `+authCols, id, customerUserID, now)
	if err != nil {
		return Authorization{}, fmt.Errorf("revoke authorization: %w", err)
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanAuth)
	if err != nil {
		return Authorization{}, fmt.Errorf("revoke authorization %s: %w", id, postgres.Translate(err))
	}
	return a, nil
}

const chargeCols = `id, merchant_user_id, merchant_key_id, payment_ref, customer_wallet, merchant_wallet, authorization_id,
	amount, fee, currency, description, transaction_id, created_at`

func scanCharge(row pgx.CollectableRow) (Charge, error) {
	var c Charge
	err := row.Scan(&c.ID, &c.MerchantUserID, &c.MerchantKeyID, &c.PaymentRef, &c.CustomerWallet, &c.MerchantWallet,
		&c.AuthorizationID, &c.Amount, &c.Fee, &c.Currency, &c.Description, &c.TransactionID, &c.CreatedAt)
	return c, err
}

// ChargeByRef returns the merchant's settled charge of paymentRef
// (postgres.ErrNotFound when none).
func (s *Store) ChargeByRef(ctx context.Context, merchantUserID, paymentRef string) (Charge, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+chargeCols+` FROM fiat_merchant_charges
		WHERE merchant_user_id = $1 AND payment_ref = $2`, merchantUserID, paymentRef)
	if err != nil {
		return Charge{}, fmt.Errorf("find charge: %w", err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCharge)
	if err != nil {
		return Charge{}, fmt.Errorf("find charge: %w", postgres.Translate(err))
	}
	return c, nil
}

const requestCols = `id, token, user_id, wallet_id, amount, currency, description, status, views, max_views, expires_at,
	created_at, paid_at, payer_wallet, payer_user, transaction_id, expired_at, expired_reason`

func scanRequest(row pgx.CollectableRow) (PaymentRequest, error) {
	var r PaymentRequest
	err := row.Scan(&r.ID, &r.Token, &r.UserID, &r.WalletID, &r.Amount, &r.Currency, &r.Description, &r.Status,
		&r.Views, &r.MaxViews, &r.ExpiresAt, &r.CreatedAt, &r.PaidAt, &r.PayerWallet, &r.PayerUser, &r.TransactionID,
		&r.ExpiredAt, &r.ExpiredReason)
	return r, err
}

// CreateRequest inserts an open payment request.
func (s *Store) CreateRequest(ctx context.Context, r PaymentRequest) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO fiat_payment_requests (id, token, user_id, wallet_id, amount, currency,
		description, status, views, max_views, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'open', 0, $8, $9, $10)`, r.ID, r.Token, r.UserID, r.WalletID, r.Amount,
		r.Currency, r.Description, r.MaxViews, r.ExpiresAt, r.CreatedAt)
	if err != nil {
		return fmt.Errorf("create payment request: %w", postgres.Translate(err))
	}
	return nil
}

// RequestByToken returns a request by its token (postgres.ErrNotFound when
// unknown).
func (s *Store) RequestByToken(ctx context.Context, token string) (PaymentRequest, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+requestCols+` FROM fiat_payment_requests WHERE token = $1`, token)
	if err != nil {
		return PaymentRequest{}, fmt.Errorf("find payment request: %w", err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, scanRequest)
	if err != nil {
		return PaymentRequest{}, fmt.Errorf("find payment request: %w", postgres.Translate(err))
	}
	return r, nil
}

// ViewRequest locks the request of token, lets view change it (views,
// status, expiry) and return the events the change causes, then writes the
// request and queues the events in the outbox, in one transaction.
func (s *Store) ViewRequest(ctx context.Context, token string,
	view func(r *PaymentRequest) ([]spipeline.OutboxRow, error)) (PaymentRequest, error) {
	var r PaymentRequest
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+requestCols+` FROM fiat_payment_requests WHERE token = $1 FOR UPDATE`, token)
		if err != nil {
			return err
		}
		if r, err = pgx.CollectExactlyOneRow(rows, scanRequest); err != nil {
			return postgres.Translate(err)
		}
		events, err := view(&r)
		if err != nil {
			return err
		}
		if err := send(ctx, tx, func(b *pgx.Batch) { QueueSettleRequests(b, []*PaymentRequest{&r}) }); err != nil {
			return err
		}
		return spipeline.InsertOutbox(ctx, tx, events)
	})
	if err != nil {
		return PaymentRequest{}, fmt.Errorf("view payment request: %w", err)
	}
	return r, nil
}

const dueRequestsSQL = `
SELECT ` + requestCols + ` FROM fiat_payment_requests
WHERE status = 'open' AND expires_at <= $1
ORDER BY expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`

// ExpireDue expires up to limit open requests whose time has come, queuing
// the event event builds for each in the outbox in the same transaction,
// and returns how many it expired. Rows locked by a consumer batch or a
// read are skipped and picked up on the next round.
func (s *Store) ExpireDue(ctx context.Context, now time.Time, limit int,
	event func(r PaymentRequest) (spipeline.OutboxRow, error)) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, dueRequestsSQL, now, limit)
		if err != nil {
			return err
		}
		rs, err := pgx.CollectRows(rows, scanRequest)
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			return nil
		}
		ptrs := make([]*PaymentRequest, len(rs))
		events := make([]spipeline.OutboxRow, len(rs))
		for i := range rs {
			at := now
			rs[i].Status, rs[i].ExpiredAt, rs[i].ExpiredReason = "expired", &at, "time"
			ptrs[i] = &rs[i]
			if events[i], err = event(rs[i]); err != nil {
				return err
			}
		}
		if err := send(ctx, tx, func(b *pgx.Batch) { QueueSettleRequests(b, ptrs) }); err != nil {
			return err
		}
		n = len(rs)
		return spipeline.InsertOutbox(ctx, tx, events)
	})
	if err != nil {
		return 0, fmt.Errorf("expire due payment requests: %w", err)
	}
	return n, nil
}

// OpenRequestsOf lists a user's open requests, newest first.
func (s *Store) OpenRequestsOf(ctx context.Context, userID string, limit int) ([]PaymentRequest, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+requestCols+` FROM fiat_payment_requests
		WHERE user_id = $1 AND status = 'open' ORDER BY created_at DESC, id DESC LIMIT $2`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("list open requests: %w", err)
	}
	rs, err := pgx.CollectRows(rows, scanRequest)
	if err != nil {
		return nil, fmt.Errorf("list open requests: %w", err)
	}
	return rs, nil
}

// The batch statements of the commerce commands (see batch.go).

const lockRequestsSQL = `SELECT ` + requestCols + ` FROM fiat_payment_requests WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// QueueLockRequests queues the lock of the payment requests among ids.
func QueueLockRequests(b *pgx.Batch, ids []string, into map[string]*PaymentRequest) {
	lockByIDs(b, "payment requests", lockRequestsSQL, ids, scanRequest, func(r *PaymentRequest) string { return r.ID }, into)
}

const settleRequestsSQL = `
UPDATE fiat_payment_requests r SET status = v.status, views = v.views, paid_at = v.paid_at, payer_wallet = v.payer_wallet,
    payer_user = v.payer_user, transaction_id = v.tx_id, expired_at = v.expired_at, expired_reason = v.reason
FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::text[])
    AS v(id, status, views, paid_at, payer_wallet, payer_user, tx_id, expired_at, reason)
WHERE r.id = v.id`

// QueueSettleRequests queues the state of changed requests, one statement.
func QueueSettleRequests(b *pgx.Batch, rs []*PaymentRequest) {
	if len(rs) == 0 {
		return
	}
	type r = *PaymentRequest
	b.Queue(settleRequestsSQL, col(rs, func(x *r) string { return (*x).ID }), col(rs, func(x *r) string { return (*x).Status }),
		col(rs, func(x *r) int32 { return int32((*x).Views) }), col(rs, func(x *r) *time.Time { return (*x).PaidAt }),
		col(rs, func(x *r) string { return (*x).PayerWallet }), col(rs, func(x *r) string { return (*x).PayerUser }),
		col(rs, func(x *r) string { return (*x).TransactionID }), col(rs, func(x *r) *time.Time { return (*x).ExpiredAt }),
		col(rs, func(x *r) string { return (*x).ExpiredReason }))
}

const lockAuthsSQL = `SELECT ` + authCols + ` FROM fiat_merchant_authorizations WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// QueueLockAuthorizations queues the lock of the authorizations among ids.
func QueueLockAuthorizations(b *pgx.Batch, ids []string, into map[string]*Authorization) {
	lockByIDs(b, "authorizations", lockAuthsSQL, ids, scanAuth, func(a *Authorization) string { return a.ID }, into)
}

// QueueWriteRemaining queues the remaining allowance of authorizations.
func QueueWriteRemaining(b *pgx.Batch, as []*Authorization) {
	if len(as) == 0 {
		return
	}
	b.Queue(`UPDATE fiat_merchant_authorizations a SET remaining = v.remaining
		FROM unnest($1::text[], $2::bigint[]) AS v(id, remaining) WHERE a.id = v.id`,
		col(as, func(a **Authorization) string { return (*a).ID }), col(as, func(a **Authorization) int64 { return (*a).Remaining }))
}

// ChargeKey identifies a charge by merchant and payment reference.
type ChargeKey struct{ MerchantUserID, PaymentRef string }

// QueueChargesByRef queues the read of the settled charges among keys. They
// are not locked: the unique (merchant, payment_ref) key makes a concurrent
// second insert fail the batch, whose retry then finds the charge.
func QueueChargesByRef(b *pgx.Batch, keys []ChargeKey, into map[ChargeKey]*Charge) {
	if len(keys) == 0 {
		return
	}
	b.Queue(`SELECT `+chargeCols+` FROM fiat_merchant_charges
		WHERE (merchant_user_id, payment_ref) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
		col(keys, func(k *ChargeKey) string { return k.MerchantUserID }), col(keys, func(k *ChargeKey) string { return k.PaymentRef }),
	).Query(func(rows pgx.Rows) error {
		cs, err := pgx.CollectRows(rows, scanCharge)
		if err != nil {
			return fmt.Errorf("find charges: %w", err)
		}
		for i := range cs {
			into[ChargeKey{cs[i].MerchantUserID, cs[i].PaymentRef}] = &cs[i]
		}
		return nil
	})
}

const insertChargesSQL = `
INSERT INTO fiat_merchant_charges (id, merchant_user_id, merchant_key_id, payment_ref, customer_wallet, merchant_wallet,
    authorization_id, amount, fee, currency, description, transaction_id, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
    $9::bigint[], $10::text[], $11::text[], $12::text[], $13::timestamptz[])`

// QueueInsertCharges queues settled charges.
func QueueInsertCharges(b *pgx.Batch, cs []Charge) {
	if len(cs) == 0 {
		return
	}
	b.Queue(insertChargesSQL, col(cs, func(c *Charge) string { return c.ID }), col(cs, func(c *Charge) string { return c.MerchantUserID }),
		col(cs, func(c *Charge) string { return c.MerchantKeyID }), col(cs, func(c *Charge) string { return c.PaymentRef }),
		col(cs, func(c *Charge) string { return c.CustomerWallet }), col(cs, func(c *Charge) string { return c.MerchantWallet }),
		col(cs, func(c *Charge) string { return c.AuthorizationID }), col(cs, func(c *Charge) int64 { return c.Amount }),
		col(cs, func(c *Charge) int64 { return c.Fee }), col(cs, func(c *Charge) string { return c.Currency }),
		col(cs, func(c *Charge) string { return c.Description }), col(cs, func(c *Charge) string { return c.TransactionID }),
		col(cs, func(c *Charge) time.Time { return c.CreatedAt }))
}

// Books are one currency's totals for reconciliation, in minor units.
type Books struct {
	Currency string
	// ProcessorCredited sums the deposits the processor reported paid
	// (completed deposit sessions, written from the verified webhooks).
	ProcessorCredited int64
	// DepositsCredited sums the deposit transactions of the ledger.
	DepositsCredited int64
	// Withdrawn sums withdrawals; PaidOut sums payout holds minus releases.
	Withdrawn int64
	PaidOut   int64
	// Fees sums the fees the ledger recorded (they sit in the fee wallets).
	Fees int64
	// WalletBalances sums every wallet, fee wallets included; FeeWallets
	// is the part in the fee wallets.
	WalletBalances int64
	FeeWallets     int64
}

const booksSQL = `
WITH cur(currency) AS (VALUES ('KZT'), ('USD')),
dep AS (SELECT currency, sum(amount)::bigint AS s FROM fiat_deposits WHERE status = 'completed' GROUP BY currency),
tx AS (SELECT currency,
        coalesce(sum(amount) FILTER (WHERE kind = 'deposit'), 0)::bigint AS deposits,
        coalesce(sum(amount) FILTER (WHERE kind = 'withdrawal'), 0)::bigint AS withdrawn,
        coalesce(sum(amount) FILTER (WHERE kind = 'payout_hold'), 0)::bigint
          - coalesce(sum(amount) FILTER (WHERE kind = 'payout_release'), 0)::bigint AS paid_out,
        coalesce(sum(fee), 0)::bigint AS fees
      FROM fiat_transactions GROUP BY currency),
w AS (SELECT currency, sum(balance)::bigint AS total,
        coalesce(sum(balance) FILTER (WHERE kind = 'fee'), 0)::bigint AS fee_total
      FROM fiat_wallets GROUP BY currency)
SELECT cur.currency, coalesce(dep.s, 0), coalesce(tx.deposits, 0), coalesce(tx.withdrawn, 0), coalesce(tx.paid_out, 0),
       coalesce(tx.fees, 0), coalesce(w.total, 0), coalesce(w.fee_total, 0)
FROM cur LEFT JOIN dep USING (currency) LEFT JOIN tx USING (currency) LEFT JOIN w USING (currency)
ORDER BY cur.currency`

// Books computes the reconciliation totals of every currency in one
// statement (one REPEATABLE READ snapshot, so the sides agree in time).
func (s *Store) Books(ctx context.Context) ([]Books, error) {
	var out []Books
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, booksSQL)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Books, error) {
			var b Books
			err := r.Scan(&b.Currency, &b.ProcessorCredited, &b.DepositsCredited, &b.Withdrawn, &b.PaidOut, &b.Fees,
				&b.WalletBalances, &b.FeeWallets)
			return b, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reconciliation totals: %w", err)
	}
	return out, nil
}
