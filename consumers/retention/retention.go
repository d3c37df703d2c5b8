// Package retention forgets applied-command records once the command topics
// can no longer redeliver them: a consumer that loses its offsets re-reads a
// command topic from the start of its retention (7 days), so the ids are
// kept at least that long (PROCESSED_RETENTION, checked at start-up). That
// also covers the 24-hour Idempotency-Key window of decisions.md.
package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/pipeline"
)

// Expirer deletes expired processed-command rows periodically.
type Expirer struct {
	pool   *pgxpool.Pool
	window time.Duration
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger
}

// NewExpirer builds the job; it runs every `every` and forgets applied
// commands older than window.
func NewExpirer(pool *pgxpool.Pool, every, window time.Duration, now func() time.Time, log *slog.Logger) *Expirer {
	return &Expirer{pool: pool, every: every, window: window, now: now, log: log.With("component", "retention")}
}

// Run expires rows until ctx is cancelled.
func (e *Expirer) Run(ctx context.Context) error {
	t := time.NewTicker(e.every)
	defer t.Stop()
	for {
		n, err := pipeline.DeleteProcessedBefore(ctx, e.pool, e.now().Add(-e.window))
		if err != nil && ctx.Err() == nil {
			e.log.Warn("expiring processed commands failed", "err", err)
		} else if n > 0 {
			e.log.Info("expired processed commands", "rows", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
