// Package ledger is the ledger appender: the one consumer of the
// one-partition ledger.append topic, which owns the chain head. It chains
// each batch onto the head stored in Postgres (locked for the batch), so a
// restart or a rebalance continues the chain without a gap or a fork.
package ledger

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/topics"
)

// Appender is the pipeline.Handler of the ledger-appender group. Its one
// record type, ledger.append, is declared on a pipeline.Table like every
// module's commands (appendEntry, append.go): a record that cannot be read
// answers 400 invalid_command, as everywhere.
type Appender struct {
	salt  string
	now   func() time.Time
	table *pipeline.Table[*batch]
}

var _ pipeline.Handler = (*Appender)(nil)

// declarations lists the record type the appender reads on ledger.append.
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, appendEntry](schemas.TypeLedgerAppend),
	}
}

// NewAppender builds the appender; salt is mixed into every hash.
func NewAppender(salt string, now func() time.Time) *Appender {
	table, err := pipeline.NewTable("ledger", topics.LedgerAppend, nil, declarations()...)
	if err != nil {
		panic(err) // the declarations above are fixed: TestAppend* builds it
	}
	return &Appender{salt: salt, now: now, table: table}
}

// batch is the working set of one Apply call: the framework drives it
// (pipeline.ApplyInTx).
type batch struct {
	a        *Appender
	keys     []ledger.SourceKey // the sources the records name (Lock)
	ids      []string           // the entry ids they ask for
	head     ledger.Head
	existing map[ledger.SourceKey]ledger.Entry
	taken    map[string]bool
	ts       time.Time
	inBatch  map[ledger.SourceKey]int // -> index in fresh
	fresh    []ledger.Entry
}

var _ pipeline.TxBatch = (*batch)(nil)

// Apply chains the batch in command order (pipeline.ApplyInTx). A command
// whose source (kind, sourceId) already has an entry, in the table or
// earlier in the batch, is answered 200 with that entry and appends
// nothing; a new entry is answered 201 and emits ledger.entry_added.
func (a *Appender) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	return pipeline.ApplyInTx(ctx, tx, a.table, &batch{a: a, inBatch: map[ledger.SourceKey]int{}}, cmds)
}

// Load locks the chain head and reads the entries of the batch's sources
// and ids; a batch with no readable record reads nothing.
func (b *batch) Load(ctx context.Context, tx pgx.Tx) error {
	if len(b.keys) == 0 {
		return nil
	}
	var err error
	if b.head, err = ledger.LockHead(ctx, tx); err != nil {
		return err
	}
	if b.existing, err = ledger.BySources(ctx, tx, b.keys); err != nil {
		return err
	}
	if b.taken, err = ledger.ExistingIDs(ctx, tx, b.ids); err != nil {
		return err
	}
	b.ts = b.a.now().UTC().Truncate(time.Microsecond)
	if b.head.Timestamp != nil && b.ts.Before(*b.head.Timestamp) {
		b.ts = b.head.Timestamp.UTC() // timestamps never go backwards along the chain
	}
	return nil
}

// Stamp: every entry of a batch has the batch's timestamp.
func (b *batch) Stamp(int) time.Time { return b.ts }

// At: the chain's timestamps are the batch's, whatever the command's clock.
func (b *batch) At(time.Time, schemas.Envelope) {}

// Save appends the batch's new entries and moves the head.
func (b *batch) Save(ctx context.Context, tx pgx.Tx) error {
	if len(b.fresh) == 0 {
		return nil
	}
	if err := ledger.Insert(ctx, tx, b.fresh); err != nil {
		return err
	}
	ts := b.ts
	b.head.Timestamp = &ts
	return ledger.SetHead(ctx, tx, b.head)
}

// unrecorded marks an outcome that needs no processed-command row: the
// entry's unique source (scope, kind, sourceId) answers a redelivery without
// appending again (the runner still records it when a reply is awaited).
func unrecorded(o pipeline.Outcome) pipeline.Outcome {
	o.Unrecorded = true
	return o
}
