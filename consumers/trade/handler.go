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

// declarations lists every command type the handler reads on
// trade.commands, each in its own file; each is checked by its data type's
// Validate, the rule the gateway checked before sending it.
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, topUp](schemas.TypeTradeTopUp),
		pipeline.Declare[*batch, transfer](schemas.TypeTradeTransfer),
	}
}

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
	table, err := pipeline.NewTable("trade", topics.TradeCommands, nil, declarations()...)
	if err != nil {
		return nil, err
	}
	return &Handler{store: st, now: now, table: table}, nil
}

// Apply decides the commands in partition order inside tx
// (pipeline.ApplyInTx). Every account the batch names is locked once, in id
// order; balances are written once per batch however many commands moved
// them.
func (h *Handler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	b := &batch{h: h, accounts: map[string]*store.AccountRow{}, dirty: map[string]bool{}}
	return pipeline.ApplyInTx(ctx, tx, h.table, b, cmds)
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
