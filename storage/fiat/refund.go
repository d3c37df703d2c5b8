package fiat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Refund is a fiat_refunds row, inserted by the fiat consumer in the batch
// that moved its money.
type Refund struct {
	ID             string
	Source         string // "charge" or "request"
	SourceID       string // the charge id or the payment request id
	RequestToken   string
	RefunderUserID string
	FromWallet     string
	ToWallet       string
	ToUser         string
	Amount         int64
	Currency       string
	Reason         string
	Status         string
	TransactionID  string
	CreatedAt      time.Time
}

// RefundableCharge is a charge with what has been refunded of it.
type RefundableCharge struct {
	Charge
	Refunded int64
}

const lockChargesSQL = `SELECT ` + chargeCols + `, refunded FROM fiat_merchant_charges
WHERE id = ANY($1) ORDER BY id FOR UPDATE`

var refundCols = []string{"id", "source", "source_id", "request_token", "refunder_user_id", "from_wallet", "to_wallet",
	"to_user", "amount", "currency", "reason", "status", "transaction_id", "created_at"}

func scanRefundableCharge(row pgx.CollectableRow) (RefundableCharge, error) {
	var c RefundableCharge
	err := row.Scan(&c.ID, &c.MerchantUserID, &c.MerchantKeyID, &c.PaymentRef, &c.CustomerWallet, &c.MerchantWallet,
		&c.AuthorizationID, &c.Amount, &c.Fee, &c.Currency, &c.Description, &c.TransactionID, &c.CreatedAt, &c.Refunded)
	return c, err
}

// QueueLockCharges queues the lock of the charges among ids, with their
// refunded totals (batch statement of the refunds).
func QueueLockCharges(b *pgx.Batch, ids []string, into map[string]*RefundableCharge) {
	lockByIDs(b, "charges", lockChargesSQL, ids, scanRefundableCharge, func(c *RefundableCharge) string { return c.ID }, into)
}

// QueueRequestsRefunded queues the read of the refunded totals of the
// requests among ids; the rows are locked by QueueLockRequests before it.
func QueueRequestsRefunded(b *pgx.Batch, ids []string, into map[string]int64) {
	if len(ids) == 0 {
		return
	}
	b.Queue(`SELECT id, refunded FROM fiat_payment_requests WHERE id = ANY($1)`, ids).Query(func(rows pgx.Rows) error {
		return sums(rows, "refunded totals", into)
	})
}

// QueueWriteRefunded queues the new refunded totals of charges and
// requests, one statement per table.
func QueueWriteRefunded(b *pgx.Batch, charges, requests map[string]int64) {
	for _, t := range []struct {
		table string
		vals  map[string]int64
	}{{"fiat_merchant_charges", charges}, {"fiat_payment_requests", requests}} {
		if len(t.vals) == 0 {
			continue
		}
		ids := sortedKeys(t.vals)
		vals := make([]int64, len(ids))
		for i, id := range ids {
			vals[i] = t.vals[id]
		}
		b.Queue(`UPDATE `+t.table+` x SET refunded = v.refunded
			FROM unnest($1::text[], $2::bigint[]) AS v(id, refunded) WHERE x.id = v.id`, ids, vals)
	}
}

const insertRefundsSQL = `
INSERT INTO fiat_refunds (id, source, source_id, request_token, refunder_user_id, from_wallet, to_wallet,
    to_user, amount, currency, reason, status, transaction_id, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
    $9::bigint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::timestamptz[])`

// QueueInsertRefunds queues refund rows.
func QueueInsertRefunds(b *pgx.Batch, rs []Refund) {
	if len(rs) == 0 {
		return
	}
	b.Queue(insertRefundsSQL, col(rs, func(r *Refund) string { return r.ID }), col(rs, func(r *Refund) string { return r.Source }),
		col(rs, func(r *Refund) string { return r.SourceID }), col(rs, func(r *Refund) string { return r.RequestToken }),
		col(rs, func(r *Refund) string { return r.RefunderUserID }), col(rs, func(r *Refund) string { return r.FromWallet }),
		col(rs, func(r *Refund) string { return r.ToWallet }), col(rs, func(r *Refund) string { return r.ToUser }),
		col(rs, func(r *Refund) int64 { return r.Amount }), col(rs, func(r *Refund) string { return r.Currency }),
		col(rs, func(r *Refund) string { return r.Reason }), col(rs, func(r *Refund) string { return r.Status }),
		col(rs, func(r *Refund) string { return r.TransactionID }), col(rs, func(r *Refund) time.Time { return r.CreatedAt }))
}

func scanRefund(row pgx.CollectableRow) (Refund, error) {
	var r Refund
	err := row.Scan(&r.ID, &r.Source, &r.SourceID, &r.RequestToken, &r.RefunderUserID, &r.FromWallet, &r.ToWallet,
		&r.ToUser, &r.Amount, &r.Currency, &r.Reason, &r.Status, &r.TransactionID, &r.CreatedAt)
	return r, err
}

// ChargeByID returns a settled charge (postgres.ErrNotFound when unknown).
func (s *Store) ChargeByID(ctx context.Context, id string) (Charge, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+chargeCols+` FROM fiat_merchant_charges WHERE id = $1`, id)
	if err != nil {
		return Charge{}, fmt.Errorf("find charge: %w", err)
	}
	c, err := pgx.CollectExactlyOneRow(rows, scanCharge)
	if err != nil {
		return Charge{}, fmt.Errorf("find charge %s: %w", id, postgres.Translate(err))
	}
	return c, nil
}

// RefundPage is a page of a charge's or request's refunds with the totals
// over all of them.
type RefundPage struct {
	Items    []Refund
	Total    int64
	Refunded int64
}

// RefundCursor is the position of a refund in its list (newest first).
type RefundCursor struct {
	CreatedAt time.Time
	ID        string
}

// RefundsOf lists the refunds of a charge or request (source, sourceID),
// newest first (by creation time, then id), strictly after the cursor
// position when it is set, with the count and sum of all of them.
func (s *Store) RefundsOf(ctx context.Context, source, sourceID string, after *RefundCursor, limit int) (RefundPage, error) {
	var p RefundPage
	var at *time.Time
	var id string
	if after != nil {
		at, id = &after.CreatedAt, after.ID
	}
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount), 0)::bigint FROM fiat_refunds
			WHERE source = $1 AND source_id = $2`, source, sourceID).Scan(&p.Total, &p.Refunded); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+strings.Join(refundCols, ", ")+` FROM fiat_refunds
			WHERE source = $1 AND source_id = $2 AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
			ORDER BY created_at DESC, id DESC LIMIT $5`, source, sourceID, at, id, limit)
		if err != nil {
			return err
		}
		p.Items, err = pgx.CollectRows(rows, scanRefund)
		return err
	})
	if err != nil {
		return RefundPage{}, fmt.Errorf("list refunds: %w", err)
	}
	return p, nil
}
