// Package retention forgets applied-command records once they leave the
// 24-hour idempotency window (decisions.md: an Idempotency-Key is kept 24 h).
// Redelivery after a crash happens within seconds of the original delivery,
// so the window also covers exactly-once application.
package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/pipeline"
)

// Window is how long an applied command is remembered.
const Window = 24 * time.Hour

// Expirer deletes expired processed-command rows periodically.
type Expirer struct {
	pool  *pgxpool.Pool
	every time.Duration
	now   func() time.Time
	log   *slog.Logger
}

// NewExpirer builds the job; it runs every `every`.
func NewExpirer(pool *pgxpool.Pool, every time.Duration, now func() time.Time, log *slog.Logger) *Expirer {
	return &Expirer{pool: pool, every: every, now: now, log: log.With("component", "retention")}
}

// Run expires rows until ctx is cancelled.
func (e *Expirer) Run(ctx context.Context) error {
	t := time.NewTicker(e.every)
	defer t.Stop()
	for {
		n, err := pipeline.DeleteProcessedBefore(ctx, e.pool, e.now().Add(-Window))
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
