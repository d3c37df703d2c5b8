package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// applyWithRetry applies cmds, retrying with backoff and isolating what
// fails. The rule: an error of the server, the connection or contention
// (postgres.Momentary: a failover, a demoted primary, an admin shutdown, a
// serialization failure or deadlock) retries the batch whole for as long
// as it takes and never parks anything. Any other error may be a
// command's own: a batch failing with it is split — at once when the
// error cannot pass by running again (a data error, a panic), after
// Config.ParkAfter failed attempts when it might (postgres.Transient: a
// unique violation racing another consumer, a cancelled query or statement
// timeout) — and a command failing on its own is tried Config.ParkAfter
// times, then parked on the DLQ with a 500 reply whatever its SQLSTATE, so
// that the rest of its partition goes on. A batch the position fence
// refuses is sought back (position.go) and returns with at.pos.fenced set.
// Only the first transaction overlaps the batch before (at.before); when
// that batch did not commit first, this one waits until it is finished and
// is applied again after it.
func (r *Runner) applyWithRetry(ctx, stop context.Context, cmds []Command, parked []*kgo.Record, at place) ([]*kgo.Record, []*kgo.Record, error) {
	backoff := 50 * time.Millisecond
	tries := 0 // failed attempts that were not momentary
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
			if r.revalidating.Swap(false) {
				if err := r.revalidate(ctx); err != nil {
					r.log.Warn("checking the positions against the new primary failed; the fence of each batch still checks them", "err", err)
				}
			}
			return replies, parked, nil
		}
		if fe, ok := pipeline.Fenced(err); ok && at.pos != nil {
			fe.Group = r.cfg.Group
			if err := r.seekBack(ctx, stop, fe, at.pos); err != nil {
				return nil, nil, err
			}
			return nil, parked, nil
		}
		if div := (*DivergedError)(nil); errors.As(err, &div) {
			// Never recorded, never parked: the runner stops (reproduce.go).
			r.log.Error(div.Error())
			return nil, nil, err
		}
		switch r.stepAfter(err, len(cmds), &tries) {
		case splitBatch:
			// Split the batch so one bad command cannot hold back the others.
			// Each command's transaction checks the batch's positions (the
			// fence), and the batch stores them once all are applied.
			var all []*kgo.Record
			for k, c := range cmds {
				if isHeld(heldFrom(cmds[:k]), c) {
					continue // after a command held back (reproduce.go)
				}
				rep, p, err := r.applyWithRetry(ctx, stop, []Command{c}, nil, place{lock: at.lock, pos: at.pos, fenceOnly: true})
				if err != nil {
					return nil, nil, err
				}
				if at.pos != nil && at.pos.fenced {
					return nil, parked, nil // sought back: the batch comes again
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
				"id", cmds[0].Env.ID, "attempt", tries, "of", r.cfg.ParkAfter, "err", err)
		case retryWhole:
			r.log.Warn("batch failed, trying it whole again before splitting it", "records", len(cmds),
				"attempt", tries, "of", r.cfg.ParkAfter, "err", err)
		case retryBatch:
			r.log.Warn("batch failed, retrying", "records", len(cmds), "backoff", backoff, "err", err)
			postgres.FollowPrimary(r.pool, err)
			// The server that answers next may be a promoted one that lost
			// commits: once a batch commits again, the runner checks its
			// partitions' stored positions.
			r.revalidating.Store(true)
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
	// retryBatch: the error is momentary; the batch is tried again whole,
	// after a backoff, for as long as it takes.
	retryBatch step = iota
	// retryWhole: the error might pass by running the batch again; it is
	// tried again whole before it is split.
	retryWhole
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
// tries counts the failed attempts that were not momentary.
func (r *Runner) stepAfter(err error, n int, tries *int) step {
	panicked := errors.Is(err, ErrPanicked)
	if !panicked && postgres.Momentary(err) {
		return retryBatch
	}
	*tries++
	switch {
	case n > 1 && !panicked && postgres.Transient(err) && *tries < r.cfg.ParkAfter:
		return retryWhole
	case n > 1:
		return splitBatch
	case *tries >= r.cfg.ParkAfter:
		return parkCommand
	default:
		return retryAlone
	}
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
