package retention

import (
	"context"
	"log/slog"
	"time"
)

// PruneFunc deletes what is older than before and says how many rows went.
type PruneFunc func(ctx context.Context, before time.Time) (int64, error)

// Pruner runs a PruneFunc every `every` for what is older than keep: the
// retention of signed payloads and of spent abuse-budget windows.
type Pruner struct {
	name        string
	prune       PruneFunc
	every, keep time.Duration
	now         func() time.Time
	log         *slog.Logger
}

// NewPruner builds the job named name (for the log).
func NewPruner(name string, prune PruneFunc, every, keep time.Duration, now func() time.Time, log *slog.Logger) *Pruner {
	return &Pruner{name: name, prune: prune, every: every, keep: keep, now: now,
		log: log.With("component", "retention", "prune", name)}
}

// Run prunes until ctx is cancelled; a failure is logged and retried at the
// next tick.
func (p *Pruner) Run(ctx context.Context) error {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		n, err := p.prune(ctx, p.now().Add(-p.keep))
		if err != nil && ctx.Err() == nil {
			p.log.Warn("pruning failed", "err", err)
		} else if n > 0 {
			p.log.Info("pruned", "rows", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
