package pipeline

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/pipeline"
)

// A batch is applied READ COMMITTED whatever the server's or the role's
// default_transaction_isolation: the order lock orders batches only when
// each statement after it reads what the batch before committed (under
// REPEATABLE READ the reads would see the snapshot of BEGIN, taken before
// the lock was granted), and the handlers' lock-then-read steps rely on the
// same (a row inserted by another applier while this one waited is seen).
var applyTxOptions = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// beginApplySQL is applyTxOptions for a pipelined batch's BEGIN.
const beginApplySQL = "BEGIN ISOLATION LEVEL READ COMMITTED"

// applyBatch runs one transaction: take the worker's order lock, look up
// which commands were applied before, apply the rest, record them with
// their replies, queue their emissions, commit. It returns the reply
// records to send. A Pipelined handler's batch takes two round trips; any
// other takes one per statement. Overlapping the batch before (at.before),
// it commits only after that one did, else it rolls back with
// errBeforeFailed.
func (r *Runner) applyBatch(ctx context.Context, cmds []Command, at place) ([]*kgo.Record, error) {
	if !at.waitLocked() {
		return nil, errBeforeFailed
	}
	if ph, ok := r.handler.(Pipelined); ok {
		replies, done, err := r.applyPipelined(ctx, ph, cmds, at)
		if done || err != nil {
			return replies, err
		}
	}
	begun, err := r.pool.BeginTx(ctx, applyTxOptions)
	if err != nil {
		return nil, fmt.Errorf("begin batch: %w", err)
	}
	trips := 1 // BEGIN
	defer func() { r.metrics.RoundTrips.WithLabelValues(r.cfg.Group).Add(float64(trips)) }()
	tx := countingTx{Tx: begun, n: &trips}
	defer func() { _ = tx.Rollback(ctx) }()

	lookup := &pgx.Batch{}
	pipeline.QueueOrderLock(lookup, at.lock)
	seen := make(map[string]pipeline.Processed)
	r.queueLookup(lookup, commandIDs(cmds), seen)
	// A batch that re-applies commands may hold some back (reproduce.go):
	// it stores its positions once it knows.
	late := reapplies(cmds)
	if !late {
		r.queuePositions(lookup, at)
	}
	if err := tx.SendBatch(ctx, lookup).Close(); err != nil {
		return nil, fmt.Errorf("lock and look up batch: %w", err)
	}
	at.own.hold()
	s := sortOut(cmds, seen)
	if len(s.fresh) > 0 || len(s.reproduced) > 0 {
		var outcomes []Outcome
		if len(s.fresh) > 0 {
			outcomes, err = r.applySafely(ctx, tx, s.fresh)
			if err != nil {
				return nil, fmt.Errorf("apply %d commands: %w", len(s.fresh), err)
			}
		}
		processed, outbox, err := s.record(outcomes, r.bundled)
		if err != nil {
			return nil, err
		}
		if err := pipeline.InsertProcessed(ctx, tx, processed); err != nil {
			return nil, err
		}
		if err := pipeline.InsertOutbox(ctx, tx, outbox); err != nil {
			return nil, err
		}
	}
	if late && at.pos != nil {
		holdPositions(at.pos.ps, s.held)
		positions := &pgx.Batch{}
		r.queuePositions(positions, at)
		if err := tx.SendBatch(ctx, positions).Close(); err != nil {
			return nil, fmt.Errorf("store positions: %w", err)
		}
	}
	if !at.mayCommit() {
		return nil, errBeforeFailed
	}
	at.own.commit()
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit batch: %w", err)
	}
	r.positionsCommitted(at)
	return s.answers(cmds)
}

// applyPipelined applies the batch of a Pipelined handler in two round
// trips on one connection: BEGIN, the processed-command lookup and the
// handler's reads; then the handler's writes, the processed rows, the event
// log row and COMMIT. A statement that fails makes Postgres skip the rest
// of its round trip, COMMIT included, and the transaction is rolled back.
// done is false when the handler declines the batch (Load returns nil).
func (r *Runner) applyPipelined(ctx context.Context, ph Pipelined, cmds []Command, at place) (replies []*kgo.Record, done bool, err error) {
	// A panic sets err, which ends the batch whatever done says
	// (applyBatch).
	defer r.recoverHandler(len(cmds), &err)
	reads := &pgx.Batch{}
	reads.Queue(beginApplySQL)
	// The lock goes first in the same round trip: the statements after it
	// wait in Postgres for the batch before to end, then read what it
	// committed.
	pipeline.QueueOrderLock(reads, at.lock)
	seen := make(map[string]pipeline.Processed)
	r.queueLookup(reads, commandIDs(cmds), seen)
	r.queuePositions(reads, at)
	loaded := ph.Load(cmds, reads)
	if loaded == nil {
		return nil, false, nil
	}
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("acquire a connection: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// On a broken connection this fails too, and Release then
			// closes the connection, which is not idle.
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
	}()
	trips := 1
	defer func() { r.metrics.RoundTrips.WithLabelValues(r.cfg.Group).Add(float64(trips)) }()
	if err := conn.SendBatch(ctx, reads).Close(); err != nil {
		return nil, true, fmt.Errorf("begin batch and load: %w", err)
	}
	at.own.hold()
	s := sortOut(cmds, seen)
	writes := &pgx.Batch{}
	if len(s.fresh) > 0 || len(s.reproduced) > 0 {
		var outcomes []Outcome
		if len(s.fresh) > 0 {
			outcomes, err = loaded.Decide(ctx, s.fresh, writes)
			if err != nil {
				return nil, true, fmt.Errorf("apply %d commands: %w", len(s.fresh), err)
			}
		}
		processed, outbox, err := s.record(outcomes, r.bundled)
		if err != nil {
			return nil, true, err
		}
		pipeline.QueueInsertProcessed(writes, processed)
		pipeline.QueueInsertOutbox(writes, outbox)
		if at.pos != nil {
			holdPositions(at.pos.ps, s.held)
		}
	}
	writes.Queue("COMMIT")
	if !at.mayCommit() {
		return nil, true, errBeforeFailed
	}
	at.own.commit()
	trips++
	if err := conn.SendBatch(ctx, writes).Close(); err != nil {
		return nil, true, fmt.Errorf("write and commit batch: %w", err)
	}
	committed = true
	r.positionsCommitted(at)
	replies, err = s.answers(cmds)
	return replies, true, err
}

// queueLookup queues the one lookup of the commands among ids that were
// applied before: processed_commands, and the handler's own records when
// it is a Recorder. Closing b fills seen.
func (r *Runner) queueLookup(b *pgx.Batch, ids []string, seen map[string]pipeline.Processed) {
	rec, _ := r.handler.(Recorder)
	// A command with both keeps its processed row: a re-applied command's
	// recorded answer (reproduce.go).
	processed := map[string]bool{}
	pipeline.QueueLookupApplied(b, r.lookup, ids, func(p pipeline.Processed) { seen[p.CommandID], processed[p.CommandID] = p, true },
		func(id, hash, record string) error {
			if rec == nil {
				return fmt.Errorf("command %s has a record but the handler keeps none", id)
			}
			if processed[id] {
				return nil
			}
			status, body, err := rec.Recorded(record)
			if err != nil {
				return err
			}
			seen[id] = pipeline.Processed{CommandID: id, RequestHash: hash, Status: status, Body: body}
			return nil
		})
}

// reapplies reports whether any of cmds is re-applied (journal.go).
func reapplies(cmds []Command) bool {
	for _, c := range cmds {
		if c.Recorded != nil {
			return true
		}
	}
	return false
}

func commandIDs(cmds []Command) []string {
	ids := make([]string, len(cmds))
	for i, c := range cmds {
		ids[i] = c.Env.ID
	}
	return ids
}

// applySafely runs the handler, turning a panic into an error so that one
// bad command cannot stop the consumer group.
func (r *Runner) applySafely(ctx context.Context, tx pgx.Tx, cmds []Command) (out []Outcome, err error) {
	defer r.recoverHandler(len(cmds), &err)
	return r.handler.Apply(ctx, tx, cmds)
}
