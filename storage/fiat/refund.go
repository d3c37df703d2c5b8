package fiat

import (
	"context"
	"fmt"
	"sort"
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

// LockCharges locks the charges among ids in id order and returns them by
// id with their refunded totals (batch statement of the refunds).
func LockCharges(ctx context.Context, q postgres.Querier, ids []string) (map[string]*RefundableCharge, error) {
	out := map[string]*RefundableCharge{}
	if len(ids) == 0 {
		return out, nil
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	rows, err := q.Query(ctx, lockChargesSQL, sorted)
	if err != nil {
		return nil, fmt.Errorf("lock charges: %w", err)
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RefundableCharge, error) {
		var c RefundableCharge
		err := row.Scan(&c.ID, &c.MerchantUserID, &c.MerchantKeyID, &c.PaymentRef, &c.CustomerWallet, &c.MerchantWallet,
			&c.AuthorizationID, &c.Amount, &c.Fee, &c.Currency, &c.Description, &c.TransactionID, &c.CreatedAt, &c.Refunded)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("lock charges: %w", err)
	}
	for i := range cs {
		out[cs[i].ID] = &cs[i]
	}
	return out, nil
}

// RequestsRefunded returns the refunded totals of the requests among ids.
// The caller has locked the rows (LockRequests) in the same transaction.
func RequestsRefunded(ctx context.Context, q postgres.Querier, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT id, refunded FROM fiat_payment_requests WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read refunded totals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("scan refunded total: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}

// WriteRefunded stores the new refunded totals of charges and requests, one
// statement per table.
func WriteRefunded(ctx context.Context, q postgres.Querier, charges, requests map[string]int64) error {
	for _, t := range []struct {
		table string
		vals  map[string]int64
	}{{"fiat_merchant_charges", charges}, {"fiat_payment_requests", requests}} {
		if len(t.vals) == 0 {
			continue
		}
		ids := make([]string, 0, len(t.vals))
		for id := range t.vals {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		vals := make([]int64, len(ids))
		for i, id := range ids {
			vals[i] = t.vals[id]
		}
		if _, err := q.Exec(ctx, `UPDATE `+t.table+` x SET refunded = v.refunded
			FROM unnest($1::text[], $2::bigint[]) AS v(id, refunded) WHERE x.id = v.id`, ids, vals); err != nil {
			return fmt.Errorf("write refunded totals of %d %s rows: %w", len(ids), t.table, err)
		}
	}
	return nil
}

var refundCols = []string{"id", "source", "source_id", "request_token", "refunder_user_id", "from_wallet", "to_wallet",
	"to_user", "amount", "currency", "reason", "status", "transaction_id", "created_at"}

// InsertRefunds appends refund rows with COPY.
func InsertRefunds(ctx context.Context, q postgres.Querier, rs []Refund) error {
	if len(rs) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"fiat_refunds"}, refundCols,
		pgx.CopyFromSlice(len(rs), func(i int) ([]any, error) {
			r := rs[i]
			return []any{r.ID, r.Source, r.SourceID, r.RequestToken, r.RefunderUserID, r.FromWallet, r.ToWallet,
				r.ToUser, r.Amount, r.Currency, r.Reason, r.Status, r.TransactionID, r.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d refunds: %w", len(rs), postgres.Translate(err))
	}
	return nil
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
