package main

import (
	cledger "github.com/fintech/platform/consumers/ledger"
	gcharity "github.com/fintech/platform/gateway/charity"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	scharity "github.com/fintech/platform/storage/charity"
	"github.com/fintech/platform/storage/clickhouse"
)

// charityModule wires the charity module: its routes under /api/charity.
// It has no consumer group of its own: donations are applied by the
// fiat-applier group (consumers/fiat, donation.go).
func (a *app) charityModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			campaigns := scharity.NewCampaigns(a.pool)
			h, err := gcharity.NewHandlers(campaigns, campaigns, a.bus,
				clickhouse.NewAnalytics(a.clickhouseLazy(), a.clickhouseDatabase()), a.pool,
				a.authn.Require(), a.authn.Optional(), a.requireAdmin(a.cfg.Admins.Charity), a.now, a.server.Routes,
				gcharity.Config{PublicBaseURL: a.cfg.PublicBaseURL})
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
	}, nil
}

// charityLedgerSource lists the donations without a charity:donation entry,
// for `platform ledger reanchor`. The entry keeps the id the donation
// answered with (ledger_entry_id); an anonymous donation's entry names no
// donor.
func charityLedgerSource() cledger.Source {
	return cledger.SQLSource{
		Label:      "charity donations",
		Table:      "charity_donations",
		EntryKinds: []string{schemas.LedgerKindDonation},
		Query:      scharity.MissingLedgerEntriesSQL,
	}
}
