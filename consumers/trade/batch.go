package trade

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
)

var _ pipeline.TxBatch = (*batch)(nil)

// batch is the working set of one Apply call: the framework drives it
// (pipeline.ApplyInTx).
type batch struct {
	h        *Handler
	lockIDs  []string  // the accounts the commands asked for (Lock)
	base     time.Time // the clock of the batch, read once its accounts are locked
	now      time.Time // the clock of the command being decided (At)
	accounts map[string]*store.AccountRow
	dirty    map[string]bool
	ops      []store.OperationRow
}

// Load locks every account the batch names once, in id order.
func (b *batch) Load(ctx context.Context, tx pgx.Tx) error {
	rows, err := b.h.store.LockAccounts(ctx, tx, slices.Compact(slices.Sorted(slices.Values(b.lockIDs))))
	if err != nil {
		return err
	}
	for id, r := range rows {
		b.accounts[id] = &r
	}
	b.base = b.h.now().UTC().Truncate(time.Microsecond)
	return nil
}

// Stamp: a microsecond apart, so newest-first lists keep the applied order
// within one batch.
func (b *batch) Stamp(i int) time.Time { return b.base.Add(time.Duration(i) * time.Microsecond) }

// At sets the clock the command is decided at (a re-applied command's is
// its first).
func (b *batch) At(now time.Time, _ schemas.Envelope) { b.now = now }

// Save writes the balances once per batch however many commands moved
// them, and the operations.
func (b *batch) Save(ctx context.Context, tx pgx.Tx) error {
	return b.h.store.Save(ctx, tx, b.balances(), b.ops)
}

// balances lists the changed accounts in id order.
func (b *batch) balances() []store.Balance {
	out := make([]store.Balance, 0, len(b.dirty))
	for id := range b.dirty {
		a := b.accounts[id]
		out = append(out, store.Balance{AccountID: id, Balance: a.Balance, UpdatedAt: a.UpdatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AccountID < out[j].AccountID })
	return out
}
