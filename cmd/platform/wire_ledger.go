package main

import (
	"time"

	cledger "github.com/fintech/platform/consumers/ledger"
	cpipeline "github.com/fintech/platform/consumers/pipeline"
	gwledger "github.com/fintech/platform/gateway/ledger"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/storage/clickhouse"
	ledgerstore "github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/topics"
)

// auditBacklog bounds the ledger.append records one background audit reads
// to tell appends in flight from missing entries; further behind, the check
// says SKIPPED.
const auditBacklog = 200_000

// ledgerModule wires the ledger module: its routes, consumer groups and
// background loops.
func (a *app) ledgerModule() (module, error) {
	verifier := ledgerstore.NewVerifier(a.pool, a.cfg.LedgerSalt, a.now)
	return module{
		routes: func(r server.Router) error {
			h, err := gwledger.NewHandlers(a.pool, ledgerstore.NewStore(a.pool), verifier,
				clickhouse.NewAnalytics(a.clickhouseLazy(), a.clickhouseDatabase()),
				a.bus, a.authn, a.now, a.server.Routes, gwledger.Config{})
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
		groups: map[string]func() (runnable, error){
			topics.GroupLedger: func() (runnable, error) {
				return a.runner(cpipeline.Config{Group: topics.GroupLedger, Topics: []string{topics.LedgerAppend},
					MinBytes: 256 << 10, MaxWait: 200 * time.Millisecond}, cledger.NewAppender(a.cfg.LedgerSalt, a.now))
			},
		},
		background: []func() (runnable, error){
			func() (runnable, error) {
				// The full walk runs here, on a schedule; requests walk only
				// what was appended since the last verified head. Each run
				// also checks the ledger against the modules (the cheap part
				// of `platform verify`) for the metrics and the console.
				ops, err := topics.NewOps(a.brokers)
				if err != nil {
					return nil, err
				}
				return cledger.NewAuditor(ledgerstore.FullWalk{V: verifier}, a.pool, a.cfg.LedgerAudit, a.now, a.log).
					WithChecks(cledger.NewCrossCheck(ledgerSources(), ops, auditBacklog), a.pool, cledger.NewAuditMetrics(a.reg)), nil
			},
		},
	}, nil
}
