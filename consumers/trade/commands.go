package trade

import (
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// declarations lists every command type the handler reads on
// trade.commands; each is checked by its data type's Validate, the rule the
// gateway checked before sending it.
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, topUp](schemas.TypeTradeTopUp),
		pipeline.Declare[*batch, transfer](schemas.TypeTradeTransfer),
	}
}

// topUp credits test-net units to the caller's account.
type topUp struct{ schemas.TradeTopUp }

func (c *topUp) Lock(b *batch) { b.lockIDs = append(b.lockIDs, c.AccountID) }

func (c *topUp) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	return b.applyTopUp(env, c.TradeTopUp)
}

// transfer moves units from the caller's account to another; both are
// locked, with every other account of the batch, in id order.
type transfer struct{ schemas.TradeTransfer }

func (c *transfer) Lock(b *batch) { b.lockIDs = append(b.lockIDs, c.From, c.To) }

func (c *transfer) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	return b.applyTransfer(env, c.TradeTransfer)
}
