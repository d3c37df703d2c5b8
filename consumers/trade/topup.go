package trade

import (
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
	"github.com/fintech/platform/topics"
)

// topUp credits test-net units to the caller's account.
type topUp struct{ schemas.TradeTopUp }

func (c *topUp) Lock(b *batch) { b.lockIDs = append(b.lockIDs, c.AccountID) }

func (c *topUp) Decide(b *batch, cmd schemas.Envelope) (pipeline.Outcome, error) {
	d := &c.TradeTopUp
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
