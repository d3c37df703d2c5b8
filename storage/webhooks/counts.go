package webhooks

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// CountDeliveriesByStatus returns how many deliveries are in each status
// (every status present, zero when none), for the admin console.
func (s *Store) CountDeliveriesByStatus(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{StatusPending: 0, StatusFailed: 0, StatusDelivered: 0, StatusDeadLetter: 0}
	rows, err := s.pool.Query(ctx, `SELECT status, count(*) FROM webhook_deliveries GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count webhook deliveries: %w", err)
	}
	var status string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error { out[status] = n; return nil }); err != nil {
		return nil, fmt.Errorf("count webhook deliveries: %w", err)
	}
	return out, nil
}
