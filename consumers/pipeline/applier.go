package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// Batch is a module's in-memory state of one batch (the B of its Table) as
// the framework drives it: the framework calls Lock for every command, has
// the module read what they asked for, sets the clock of each command and
// calls its Decide, in order, then has the module write. A module writes
// no loop over its commands.
type Batch interface {
	// Stamp is the clock command i of the batch is decided at when it is
	// applied for the first time (a re-applied command is decided at its
	// first clock, Command.Clock).
	Stamp(i int) time.Time
	// At sets the clock the command env is decided at; its Decide reads it
	// from the batch.
	At(now time.Time, env schemas.Envelope)
}

// TxBatch is a batch applied in a pgx.Tx, the transaction shape (ApplyInTx).
type TxBatch interface {
	Batch
	// Load reads and locks, in a fixed order, the rows the commands noted
	// (Lock).
	Load(ctx context.Context, tx pgx.Tx) error
	// Save writes what the decisions changed.
	Save(ctx context.Context, tx pgx.Tx) error
}

// QueuedBatch is a batch applied in two round trips, the pipelined shape
// (LoadQueued, ApplyQueued).
type QueuedBatch interface {
	Batch
	// QueueReads queues the locks and reads the commands noted (Lock), in
	// a fixed order.
	QueueReads(q *pgx.Batch)
	// Settle runs once the reads have run, before the first of fresh
	// decisions; an error rolls the batch back.
	Settle(fresh int) error
	// QueueWrites queues the writes of what the decisions changed.
	QueueWrites(q *pgx.Batch)
}

// ApplyInTx is Handler.Apply of a module in the transaction shape: every
// command of cmds is decoded by t and notes its locks on b, b loads them,
// the commands are decided in order (Passes) and b saves. An error of a
// Decide, of Load or of Save rolls the whole batch back.
func ApplyInTx[B TxBatch](ctx context.Context, tx pgx.Tx, t *Table[B], b B, cmds []Command) ([]Outcome, error) {
	ds := t.DecodeAll(cmds)
	for _, d := range ds {
		d.Lock(b)
	}
	if err := b.Load(ctx, tx); err != nil {
		return nil, err
	}
	out, err := decideAll(b, cmds, ds)
	if err != nil {
		return nil, err
	}
	if err := b.Save(ctx, tx); err != nil {
		return nil, err
	}
	return out, nil
}

// decideAll decides cmds in order, or, re-applying commands after a
// restore, reproduces their first outcomes (Passes); each at its clock.
func decideAll[B Batch](b B, cmds []Command, ds []Decider[B]) ([]Outcome, error) {
	return Passes(cmds, func(i int) (Outcome, error) {
		now := cmds[i].Clock(b.Stamp(i))
		b.At(now, cmds[i].Env)
		o, err := ds[i].Decide(b, cmds[i].Env)
		o.DecidedAt = now
		return o, err
	})
}

// LoadQueued is Pipelined.Load of a module in the pipelined shape: every
// command of cmds (applied before or not: locking the rows of one applied
// before is harmless; a repeated id once) is decoded by t and notes its
// locks on b, and b queues its reads on reads.
func LoadQueued[B QueuedBatch](t *Table[B], b B, cmds []Command, reads *pgx.Batch) Loaded {
	l := &queued[B]{b: b, ids: make([]string, 0, len(cmds)), ds: make([]Decider[B], 0, len(cmds))}
	seen := make(map[string]struct{}, len(cmds))
	for _, c := range cmds {
		if _, dup := seen[c.Env.ID]; dup {
			continue // the runner answers a repeat like its first occurrence
		}
		seen[c.Env.ID] = struct{}{}
		d := t.DecodeRecord(c)
		d.Lock(b)
		l.ids = append(l.ids, c.Env.ID)
		l.ds = append(l.ds, d)
	}
	b.QueueReads(reads)
	return l
}

// queued is a batch whose reads are queued.
type queued[B QueuedBatch] struct {
	b   B
	ids []string // first occurrences, in batch order
	ds  []Decider[B]
}

// Decide decides the fresh commands (a subsequence of those loaded, in
// order) under the locks queued, and queues the batch's writes.
func (l *queued[B]) Decide(_ context.Context, fresh []Command, writes *pgx.Batch) ([]Outcome, error) {
	ds := make([]Decider[B], len(fresh))
	j := 0
	for i, c := range fresh {
		for j < len(l.ids) && l.ids[j] != c.Env.ID {
			j++
		}
		if j == len(l.ids) {
			return nil, fmt.Errorf("command %s was not loaded", c.Env.ID)
		}
		ds[i] = l.ds[j]
	}
	if err := l.b.Settle(len(fresh)); err != nil {
		return nil, err
	}
	out, err := decideAll(l.b, fresh, ds)
	if err != nil {
		return nil, err
	}
	l.b.QueueWrites(writes)
	return out, nil
}

// ApplyQueued is Handler.Apply of a module in the pipelined shape, in tx:
// the reads LoadQueued queues, then the writes Decide queues, one round
// trip each.
func ApplyQueued[B QueuedBatch](ctx context.Context, tx pgx.Tx, t *Table[B], b B, cmds []Command) ([]Outcome, error) {
	reads := &pgx.Batch{}
	l := LoadQueued(t, b, cmds, reads)
	if err := tx.SendBatch(ctx, reads).Close(); err != nil {
		return nil, fmt.Errorf("lock the rows of %d commands: %w", len(cmds), err)
	}
	writes := &pgx.Batch{}
	out, err := l.Decide(ctx, cmds, writes)
	if err != nil {
		return nil, err
	}
	if err := tx.SendBatch(ctx, writes).Close(); err != nil {
		return nil, fmt.Errorf("write the outcome of %d commands: %w", len(cmds), err)
	}
	return out, nil
}
