package fiat

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	spipeline "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// DueExpirer expires the open payment requests whose time has come.
type DueExpirer interface {
	ExpireDue(ctx context.Context, now time.Time, limit int,
		event func(r store.PaymentRequest) (spipeline.OutboxRow, error)) (int, error)
}

var _ DueExpirer = (*store.Store)(nil)

// expireBatch bounds the requests expired per transaction.
const expireBatch = 500

// Expirer is the background loop that expires payment requests when their
// time passes, whether or not anyone looks: every interval it marks the
// due requests expired and queues request.expired in the outbox in the same
// transaction. Several instances may run; SKIP LOCKED keeps them apart.
type Expirer struct {
	store    DueExpirer
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger
}

// NewExpirer builds the loop.
func NewExpirer(st DueExpirer, interval time.Duration, now func() time.Time, log *slog.Logger) (*Expirer, error) {
	if st == nil || now == nil || log == nil {
		return nil, errors.New("request expirer: nil dependency")
	}
	if interval <= 0 {
		return nil, errors.New("request expirer: interval must be positive")
	}
	return &Expirer{store: st, interval: interval, now: now, log: log.With("component", "request-expirer")}, nil
}

// Run expires due requests until ctx ends.
func (e *Expirer) Run(ctx context.Context) error {
	t := time.NewTicker(e.interval)
	defer t.Stop()
	for {
		if _, err := e.Once(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("expiring payment requests", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Once expires every request due now and returns how many it expired.
func (e *Expirer) Once(ctx context.Context) (int, error) {
	total := 0
	for {
		now := e.now().UTC().Truncate(time.Microsecond)
		n, err := e.store.ExpireDue(ctx, now, expireBatch, func(r store.PaymentRequest) (spipeline.OutboxRow, error) {
			env, err := schemas.New(schemas.TypeRequestExpired, r.WalletID, r.UserID, store.RequestExpiredEvent(r), now)
			if err != nil {
				return spipeline.OutboxRow{}, err
			}
			return spipeline.EventRow(topics.EventsFiat, env)
		})
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}
