package main

import (
	cledger "github.com/fintech/platform/consumers/ledger"
	ggov "github.com/fintech/platform/gateway/gov"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	sgov "github.com/fintech/platform/storage/gov"
)

// govModule wires governance: its routes under /api/gov. It has no consumer
// group: the gateway writes proposals and ballots to Postgres directly, with
// their events, ledger entries and reputation events in the outbox.
func (a *app) govModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			st := sgov.NewStore(a.pool)
			h, err := ggov.NewHandlers(a.pool, st, st,
				clickhouse.NewAnalytics(a.clickhouseLazy(), a.clickhouseDatabase()), a.budgets,
				a.authn.Require(), a.requireAdmin(a.cfg.Admins.Gov), a.now, a.server.Routes)
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
	}, nil
}

// govLedgerSource lets `platform ledger reanchor` append the gov:decision
// entry of any closed proposal that lacks one.
func govLedgerSource() cledger.Source {
	return cledger.SQLSource{Label: "governance decisions", Table: "gov_proposals",
		EntryKinds: []string{schemas.LedgerKindGovernance}, Query: sgov.MissingDecisionsSQL}
}
