// Package trade is the consumer of trade.commands: it applies test-net
// top-ups and transfers. A command is keyed by the account it debits (the
// top-up's account, the transfer's sender), so every debit of one account is
// decided in order by one consumer and a balance never goes below zero. The
// consumer of the sender's partition also credits the receiver, in the same
// transaction: both rows are locked (in id order, with every other account
// of the batch) before anything changes, so a credit to an account of
// another partition is never lost and two consumers never deadlock.
package trade

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
	"github.com/fintech/platform/topics"
)

// Store is what the handler needs from storage, inside the batch transaction.
type Store interface {
	LockAccounts(ctx context.Context, tx pgx.Tx, ids []string) (map[string]store.AccountRow, error)
	Save(ctx context.Context, tx pgx.Tx, balances []store.Balance, ops []store.OperationRow) error
}

var _ Store = (*store.Store)(nil)

// Handler applies trade commands.
type Handler struct {
	store Store
	now   func() time.Time
	table *pipeline.Table[*batch]
}

var _ pipeline.Handler = (*Handler)(nil)

// NewHandler builds the handler; now stamps operations.
func NewHandler(st Store, now func() time.Time) (*Handler, error) {
	if st == nil || now == nil {
		return nil, errors.New("trade handler: nil dependency")
	}
	table, err := pipeline.NewTable("trade", nil, declarations()...)
	if err != nil {
		return nil, err
	}
	return &Handler{store: st, now: now, table: table}, nil
}

// batch is the working set of one Apply call.
type batch struct {
	lockIDs  []string // the accounts the commands asked for (Lock)
	now      time.Time
	accounts map[string]*store.AccountRow
	dirty    map[string]bool
	ops      []store.OperationRow
}

// Apply decides the commands in partition order inside tx. Every account the
// batch names is locked once, in id order; balances are written once per
// batch however many commands moved them.
func (h *Handler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	b := &batch{accounts: map[string]*store.AccountRow{}, dirty: map[string]bool{}}
	ds := h.table.DecodeAll(cmds)
	for _, d := range ds {
		d.Lock(b)
	}
	rows, err := h.store.LockAccounts(ctx, tx, dedupe(b.lockIDs))
	if err != nil {
		return nil, err
	}
	for id, r := range rows {
		b.accounts[id] = &r
	}

	base := h.now().UTC().Truncate(time.Microsecond)
	// Passes decides them in order, or, re-applying commands after a
	// restore, reproduces their first outcomes (a re-applied command at its
	// first clock).
	outcomes, err := pipeline.Passes(cmds, func(i int) (pipeline.Outcome, error) {
		// A microsecond apart: newest-first lists keep the applied order within one batch.
		b.now = cmds[i].Clock(base.Add(time.Duration(i) * time.Microsecond))
		o, err := ds[i].Decide(b, cmds[i].Env)
		o.DecidedAt = b.now
		return o, err
	})
	if err != nil {
		return nil, err
	}
	if err := h.store.Save(ctx, tx, b.balances(), b.ops); err != nil {
		return nil, err
	}
	return outcomes, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func accountNotFound() pipeline.Outcome {
	return pipeline.Reject(http.StatusNotFound, schemas.CodeAccountNotFound, "no such trade account", nil)
}

// owned returns the account when it exists and belongs to userID.
func (b *batch) owned(id, userID string) *store.AccountRow {
	a := b.accounts[id]
	if a == nil || a.UserID != userID {
		return nil
	}
	return a
}

func (b *batch) applyTopUp(cmd schemas.Envelope, d schemas.TradeTopUp) (pipeline.Outcome, error) {
	acc := b.owned(d.AccountID, d.UserID)
	if acc == nil {
		return accountNotFound(), nil
	}
	amount := int64(d.Amount)
	acc.Balance += amount
	acc.UpdatedAt = b.now
	b.dirty[acc.ID] = true
	op := store.OperationRow{ID: derivedID(cmd, "operation"), Kind: schemas.TradeKindTopUp, Amount: amount, To: acc.ID, CreatedAt: b.now}
	b.ops = append(b.ops, op)

	ev, err := b.event(cmd, schemas.TypeTradeTopUpCompleted, acc.ID, d.UserID, schemas.TradeEvent{
		TradeOperation: op.View(), AmountUnits: amount, ToUserID: acc.UserID, ToBalance: schemas.TNU(acc.Balance),
	})
	if err != nil {
		return pipeline.Outcome{}, err
	}
	entry, err := b.ledgerEntry(cmd, schemas.LedgerKindTradeTopUp, op, d.UserID)
	if err != nil {
		return pipeline.Outcome{}, err
	}
	out := pipeline.JSON(http.StatusOK, schemas.TradeTopUpResult{
		ID: acc.ID, Balance: schemas.TNU(acc.Balance), Currency: acc.Currency, UpdatedAt: b.now, OperationID: op.ID,
	})
	out.Emit = []pipeline.Emission{{Topic: topics.EventsTrade, Env: ev}, {Topic: topics.LedgerAppend, Env: entry}}
	return out, nil
}

func (b *batch) applyTransfer(cmd schemas.Envelope, d schemas.TradeTransfer) (pipeline.Outcome, error) {
	from := b.owned(d.From, d.UserID)
	to := b.accounts[d.To]
	if from == nil || to == nil {
		return accountNotFound(), nil
	}
	amount := int64(d.Amount)
	if from.Balance < amount {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance,
			"the account holds less than the amount", map[string]any{"balance": schemas.TNU(from.Balance)}), nil
	}
	from.Balance -= amount
	to.Balance += amount
	from.UpdatedAt, to.UpdatedAt = b.now, b.now
	b.dirty[from.ID], b.dirty[to.ID] = true, true
	fromID := from.ID
	op := store.OperationRow{ID: derivedID(cmd, "operation"), Kind: schemas.TradeKindTransfer, Amount: amount, From: &fromID,
		To: to.ID, CreatedAt: b.now}
	b.ops = append(b.ops, op)

	fromBal := schemas.TNU(from.Balance)
	ev, err := b.event(cmd, schemas.TypeTradeTransferCompleted, from.ID, d.UserID, schemas.TradeEvent{
		TradeOperation: op.View(), AmountUnits: amount, FromUserID: from.UserID, ToUserID: to.UserID,
		FromBalance: &fromBal, ToBalance: schemas.TNU(to.Balance),
	})
	if err != nil {
		return pipeline.Outcome{}, err
	}
	entry, err := b.ledgerEntry(cmd, schemas.LedgerKindTradeTransfer, op, d.UserID)
	if err != nil {
		return pipeline.Outcome{}, err
	}
	out := pipeline.JSON(http.StatusCreated, schemas.TradeTransferResult{
		ID: op.ID, From: from.ID, To: to.ID, Amount: d.Amount, Currency: from.Currency, CreatedAt: b.now,
	})
	out.Emit = []pipeline.Emission{{Topic: topics.EventsTrade, Env: ev}, {Topic: topics.LedgerAppend, Env: entry}}
	return out, nil
}

// ledgerEntry is the ledger record of an operation (fire-and-forget through
// the outbox; deduplicated by the appender on kind and source id). The
// amount is the exact decimal as a string: no float enters the hash chain.
func (b *batch) ledgerEntry(cmd schemas.Envelope, kind string, op store.OperationRow, actor string) (schemas.Envelope, error) {
	meta := map[string]any{"amount": schemas.FormatTNU(op.Amount), "currency": schemas.TradeCurrency, "to": op.To}
	if op.From != nil {
		meta["from"] = *op.From
	}
	return b.event(cmd, schemas.TypeLedgerAppend, "", actor, schemas.LedgerAppend{
		Kind: kind, SourceID: op.ID, ActorUserID: actor, Meta: meta,
	})
}

func (b *batch) event(cmd schemas.Envelope, typ, key, actor string, data any) (schemas.Envelope, error) {
	env, err := schemas.New(typ, key, actor, data, b.now)
	if err != nil {
		return schemas.Envelope{}, err
	}
	env.ID = derivedID(cmd, "event:"+typ)
	env.CorrelationID = cmd.CorrelationID
	return env, nil
}

// derivedID is the id cmd mints for purpose (schemas.DerivedID): applied
// again — after a restore, or re-read by a group whose offsets were lost —
// a command writes the operation, the ledger source and the events it wrote
// the first time, so trade_operations' key refuses a second application
// and the ledger, webhooks and analytics deduplicate theirs.
func derivedID(cmd schemas.Envelope, purpose string) string {
	return schemas.DerivedID(cmd.ID, purpose, cmd.OccurredAt)
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
