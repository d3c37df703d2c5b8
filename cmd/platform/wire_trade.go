package main

import (
	cledger "github.com/fintech/platform/consumers/ledger"
	cpipeline "github.com/fintech/platform/consumers/pipeline"
	ctrade "github.com/fintech/platform/consumers/trade"
	"github.com/fintech/platform/gateway/server"
	gtrade "github.com/fintech/platform/gateway/trade"
	"github.com/fintech/platform/schemas"
	strade "github.com/fintech/platform/storage/trade"
	"github.com/fintech/platform/topics"
)

// tradeModule wires the test-net wallet: its routes under /api/trade and the
// trade-applier group that applies every command of trade.commands.
func (a *app) tradeModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			h, err := gtrade.NewHandlers(strade.NewAccounts(a.pool), a.bus, a.pool, a.authn.Require(), a.now, a.server.Routes)
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
		groups: map[string]func() (runnable, error){
			topics.GroupTrade: func() (runnable, error) {
				h, err := ctrade.NewHandler(strade.NewStore(), a.now)
				if err != nil {
					return nil, err
				}
				return a.runner(cpipeline.Config{Group: topics.GroupTrade, Topics: []string{topics.TradeCommands}, Workers: 3}, h)
			},
		},
	}, nil
}

// tradeLedgerSource lists the test-net operations without their ledger
// entry, for `platform ledger reanchor`.
func tradeLedgerSource() cledger.Source {
	return cledger.SQLSource{Label: "trade operations", Table: "trade_operations",
		EntryKinds: []string{schemas.LedgerKindTradeTopUp, schemas.LedgerKindTradeTransfer},
		Query:      strade.MissingLedgerEntriesSQL}
}
