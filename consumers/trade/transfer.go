package trade

import (
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
	"github.com/fintech/platform/topics"
)

// transfer moves units from the caller's account to another; both are
// locked, with every other account of the batch, in id order.
type transfer struct{ schemas.TradeTransfer }

func (c *transfer) Lock(b *batch) { b.lockIDs = append(b.lockIDs, c.From, c.To) }

func (c *transfer) Decide(b *batch, cmd schemas.Envelope) (pipeline.Outcome, error) {
	d := &c.TradeTransfer
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
