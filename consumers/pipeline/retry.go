package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/postgres"
)

// applyWithRetry applies cmds, retrying transient failures with backoff for
// as long as it takes (nothing may be dropped), and isolating a command that
// fails on its own: that one is tried Config.ParkAfter times, then parked on
// the DLQ with a 500 reply. Only
// the first transaction overlaps the batch before (at.before); when that
// batch did not commit first, this one waits until it is finished and is
// applied again after it.
func (r *Runner) applyWithRetry(ctx, stop context.Context, cmds []Command, parked []*kgo.Record, at place) ([]*kgo.Record, []*kgo.Record, error) {
	backoff := 50 * time.Millisecond
	alone := 0 // failed attempts of a single command that is not transient
	for {
		replies, err := r.applyBatch(ctx, cmds, at)
		if at.own != nil {
			at.own.end(err == nil)
			before := at.before
			at.before, at.own = nil, nil
			if errors.Is(err, errBeforeFailed) {
				r.metrics.Redone.WithLabelValues(r.cfg.Group).Inc()
				<-before.done
				if before.failed {
					return nil, nil, err
				}
				continue
			}
		}
		if err == nil {
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "ok").Add(float64(len(cmds)))
			return replies, parked, nil
		}
		switch {
		case poisoned(err) && len(cmds) > 1:
			// Split the batch so one bad command cannot hold back the others.
			var all []*kgo.Record
			for _, c := range cmds {
				rep, p, err := r.applyWithRetry(ctx, stop, []Command{c}, nil, place{lock: at.lock})
				if err != nil {
					return nil, nil, err
				}
				all = append(all, rep...)
				parked = append(parked, p...)
			}
			return all, parked, nil
		case poisoned(err) && r.parkNow(&alone):
			r.log.Error("command failed; parking it", "type", cmds[0].Env.Type, "id", cmds[0].Env.ID, "err", err)
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "failed").Inc()
			parked = append(parked, dlqEnvelope(cmds[0], err))
			return failedReply(cmds[0]), parked, nil
		case poisoned(err):
			r.log.Warn("command failed on its own, trying it again before parking it", "type", cmds[0].Env.Type,
				"id", cmds[0].Env.ID, "attempt", alone, "of", r.cfg.ParkAfter, "err", err)
		default:
			r.log.Warn("batch failed, retrying", "records", len(cmds), "backoff", backoff, "err", err)
			postgres.FollowPrimary(r.pool, err)
		}
		select {
		case <-stop.Done():
			return nil, nil, fmt.Errorf("shutdown while retrying a batch: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// poisoned reports whether err may be the command's own fault, so that the
// batch is split and a command failing alone is eventually parked. Any
// other error is transient: the batch is retried whole, for as long as it
// takes, its offsets unmarked and its clients waiting.
func poisoned(err error) bool {
	return errors.Is(err, ErrPanicked) || !postgres.Transient(err)
}

// parkNow counts one more failed attempt of a command tried alone and
// reports whether it has had its Config.ParkAfter attempts.
func (r *Runner) parkNow(attempts *int) bool {
	*attempts++
	return *attempts >= r.cfg.ParkAfter
}

// ErrPanicked marks a handler panic: not retriable, so the batch is split
// and the command that panics on its own is parked on the DLQ while the
// rest of its batch is applied.
var ErrPanicked = errors.New("handler panicked")
