package fiat

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// DepositsByStatus lists deposits in one status, newest first (creation
// time, then id), for the admins' review queue.
func (s *Store) DepositsByStatus(ctx context.Context, status string, before schemas.Position, limit int) ([]Deposit, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+depositCols+` FROM fiat_deposits
		WHERE status = $1 AND ($2 = '' OR (created_at, id) < ($4, $2)) ORDER BY created_at DESC, id DESC LIMIT $3`,
		status, before.ID, limit, before.At)
	if err != nil {
		return nil, fmt.Errorf("list %s deposits: %w", status, err)
	}
	ds, err := pgx.CollectRows(rows, scanDeposit)
	if err != nil {
		return nil, fmt.Errorf("list %s deposits: %w", status, err)
	}
	return ds, nil
}

// ReviewSummary counts the paid deposits that were not credited: awaiting
// review, and refunded to the processor.
type ReviewSummary struct {
	NeedsReview       int64 `json:"needsReview"`
	NeedsReviewAmount int64 `json:"needsReviewAmount"`
	Refunded          int64 `json:"refunded"`
	RefundedAmount    int64 `json:"refundedAmount"`
}

// DepositReviewSummary sums the deposits in needs_review and refunded, by
// what was paid (Deposit.Refund): a mismatched or second payment counts
// what the processor reported, not the deposit's expected amount.
func (s *Store) DepositReviewSummary(ctx context.Context) (ReviewSummary, error) {
	var r ReviewSummary
	err := s.pool.QueryRow(ctx, `
WITH d AS (SELECT status, CASE WHEN paid_currency IS NULL THEN amount ELSE coalesce(paid_amount, 0) END AS paid
           FROM fiat_deposits WHERE status IN ('needs_review', 'refunded'))
SELECT count(*) FILTER (WHERE status = 'needs_review'), coalesce(sum(paid) FILTER (WHERE status = 'needs_review'), 0),
       count(*) FILTER (WHERE status = 'refunded'), coalesce(sum(paid) FILTER (WHERE status = 'refunded'), 0)
FROM d`).
		Scan(&r.NeedsReview, &r.NeedsReviewAmount, &r.Refunded, &r.RefundedAmount)
	if err != nil {
		return ReviewSummary{}, fmt.Errorf("summarise deposit reviews: %w", err)
	}
	return r, nil
}
