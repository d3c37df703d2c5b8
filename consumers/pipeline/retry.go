package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
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
		switch r.stepAfter(err, len(cmds), &alone) {
		case splitBatch:
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
		case parkCommand:
			r.log.Error("command failed; parking it", "type", cmds[0].Env.Type, "id", cmds[0].Env.ID, "err", err)
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "failed").Inc()
			parked = append(parked, dlqEnvelope(cmds[0], err))
			return failedReply(cmds[0]), parked, nil
		case retryAlone:
			r.log.Warn("command failed on its own, trying it again before parking it", "type", cmds[0].Env.Type,
				"id", cmds[0].Env.ID, "attempt", alone, "of", r.cfg.ParkAfter, "err", err)
		case retryBatch:
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

// step is what applyWithRetry does after a transaction failed.
type step int

const (
	// retryBatch: the error is transient; the batch is tried again whole,
	// after a backoff, for as long as it takes.
	retryBatch step = iota
	// splitBatch: the error may be a command's own; each command is tried
	// in a transaction of its own.
	splitBatch
	// retryAlone: a command failed on its own; it is tried again, after a
	// backoff, before it is parked.
	retryAlone
	// parkCommand: the command failed on its own Config.ParkAfter times; it
	// is parked on the DLQ with a 500 reply.
	parkCommand
)

// stepAfter classifies the failure err of a transaction of n commands;
// alone counts the failed attempts of a command tried on its own.
func (r *Runner) stepAfter(err error, n int, alone *int) step {
	switch {
	case !poisoned(err):
		return retryBatch
	case n > 1:
		return splitBatch
	case r.parkNow(alone):
		return parkCommand
	default:
		return retryAlone
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

// recoverHandler, deferred where a handler's code runs, turns its panic
// into an error wrapping ErrPanicked in *err, so that one bad command
// cannot stop the consumer group. It must be the deferred call itself:
// recover stops a panic only there.
func (r *Runner) recoverHandler(cmds int, err *error) {
	if p := recover(); p != nil {
		r.log.Error("handler panicked", "group", r.cfg.Group, "commands", cmds, "panic", fmt.Sprint(p),
			"stack", string(debug.Stack()))
		*err = fmt.Errorf("%w: %v", ErrPanicked, p)
	}
}
