package fiat

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// The pipelined path: a batch of transfers and withdrawals (the hot path)
// is applied in two round trips to Postgres. The runner sends BEGIN, its
// processed-command lookup and the locks queued by Load (wallets, then
// limits, each in id order) together; Decide applies the fresh commands in
// memory with the same code as Apply and queues the writes, which the runner
// sends with its processed rows, the event log row and COMMIT. A batch with
// any other command goes through Apply.

var _ pipeline.Pipelined = (*Handler)(nil)

// loaded is a batch whose locks are queued.
type loaded struct {
	h       *Handler
	decoded map[string]decoded // by command id: the first occurrence, as the runner's
	wallets map[string]*store.Wallet
	limits  map[string]*store.Limits
}

// Load queues the locks of a batch of transfers and withdrawals, or returns
// nil for a batch with any other command.
func (h *Handler) Load(cmds []pipeline.Command, b *pgx.Batch) pipeline.Loaded {
	l := &loaded{h: h, decoded: make(map[string]decoded, len(cmds)),
		wallets: make(map[string]*store.Wallet, 2*len(cmds)), limits: make(map[string]*store.Limits, len(cmds))}
	locks := newLockSet()
	for _, c := range cmds {
		if _, ok := l.decoded[c.Env.ID]; ok {
			continue
		}
		d := decode(c)
		if d.bad == nil && d.transfer == nil && d.withdraw == nil {
			return nil // it locks more than wallets and limits
		}
		locks.add(d)
		l.decoded[c.Env.ID] = d
	}
	store.QueueLockWallets(b, locks.wallets.list(), l.wallets)
	store.QueueLockLimits(b, locks.limitUsers.list(), l.limits)
	return l
}

// Decide applies the fresh commands under the locks Load queued and queues
// the writes: final balances, monthly totals, transactions, audit rows, and
// last the fee credits (one statement per fee wallet, in id order).
func (l *loaded) Decide(_ context.Context, fresh []pipeline.Command, w *pgx.Batch) ([]pipeline.Outcome, error) {
	now := l.h.now().UTC().Truncate(time.Microsecond)
	b := &batch{h: l.h, now: now, month: schemas.MonthKey(now), wallets: l.wallets, limits: l.limits,
		dirty: map[string]bool{}, limDirty: map[string]bool{}, fees: map[string]int64{}}
	out := make([]pipeline.Outcome, len(fresh))
	for i, c := range fresh {
		d, ok := l.decoded[c.Env.ID]
		switch {
		case !ok:
			return nil, fmt.Errorf("command %s was not loaded", c.Env.ID)
		case d.bad != nil:
			l.h.log.Warn("unreadable fiat command", "id", c.Env.ID, "type", c.Env.Type, "err", d.bad)
			out[i] = pipeline.Unreadable(d.bad.Error())
		case d.transfer != nil:
			out[i] = b.transfer(c.Env, d.transfer)
		case d.withdraw != nil:
			out[i] = b.withdraw(d.withdraw)
		default:
			return nil, fmt.Errorf("command %s of type %s has no pipelined path", c.Env.ID, c.Env.Type)
		}
	}
	bal := make(map[string]int64, len(b.dirty))
	for id := range b.dirty {
		bal[id] = b.wallets[id].Balance
	}
	store.QueueWriteBalances(w, bal)
	lims := make([]*store.Limits, 0, len(b.limDirty))
	for id := range b.limDirty {
		lims = append(lims, b.limits[id])
	}
	store.QueueWriteMonthly(w, lims)
	store.QueueInsertTransactions(w, b.txs)
	store.QueueInsertAudit(w, b.audit)
	store.QueueCreditWallets(w, b.fees)
	return out, nil
}

var _ pipeline.Recorder = (*Handler)(nil)

// QueueRecorded queues the lookup of committed transfers among ids: their
// transaction row is their record (ref_id is the command id, unique among
// transfers), and the reply is rebuilt from it exactly as it was sent.
// Rejected transfers and every other command keep a processed row.
func (h *Handler) QueueRecorded(ids []string, b *pgx.Batch, found func(pipeline.Record)) {
	store.QueueTransferRecords(b, ids, func(r store.TransferRecord) {
		o := transferReply(r.TransactionID, r.Fee, r.FromBalance, r.ToBalance, r.CreatedAt)
		found(pipeline.Record{CommandID: r.CommandID, RequestHash: r.RequestHash, Status: o.Status, Body: o.Body})
	})
}

// transferReply is the 200 answer of a committed transfer.
func transferReply(txID string, fee, fromBalance, toBalance int64, at time.Time) pipeline.Outcome {
	return pipeline.JSON(http.StatusOK, schemas.FiatTransferResult{TransactionID: txID, FeeKzt: fee,
		FromBalanceKzt: fromBalance, ToBalanceKzt: toBalance, CreatedAt: at})
}
