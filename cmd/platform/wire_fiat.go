package main

import (
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
	cpipeline "github.com/fintech/platform/consumers/pipeline"
	gfiat "github.com/fintech/platform/gateway/fiat"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	sfiat "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// requestExpiryInterval is how often the payment-request expirer looks for
// requests whose time has passed (an indexed scan of open requests).
const requestExpiryInterval = time.Second

// fiatModule wires the fiat module: its routes under /api/fiat, the
// fiat-applier consumer group of fiat.commands, the payment-request
// expirer and the background reconciliation (platform_reconcile_drift_minor,
// every reconcileInterval). RECONCILE_ALERT_URL and RECONCILE_ALERT_SECRET
// (read here) set the target and signing key of the reconciliation drift
// alert.
func (a *app) fiatModule() (module, error) {
	caps := schemas.FiatCaps{PerTransfer: a.cfg.Caps.PerTransfer, DailyDeposit: a.cfg.Caps.DailyDeposit, Monthly: a.cfg.Caps.Monthly}
	drift, err := newReconcileGauge(a.reg)
	if err != nil {
		return module{}, err
	}
	return module{
		routes: func(r server.Router) error {
			var analytics gfiat.ProcessorLedger
			if a.cfg.ClickHouseAddr != "" {
				analytics = sfiat.NewProcessorAnalytics(a.clickhouseLazy(), a.clickhouseDatabase())
			}
			h, err := gfiat.NewHandlers(gfiat.Config{
				PublicBaseURL:        a.cfg.PublicBaseURL,
				WebhookSecret:        a.cfg.ProcessorHook,
				ProcessorKey:         a.cfg.ProcessorKey,
				KYCAutoApprove:       a.cfg.KYCAutoApprove,
				Caps:                 caps,
				ReconcileAlertURL:    a.cfg.ReconcileURL,
				ReconcileAlertSecret: a.cfg.ReconcileKey,
				OnReconcile:          drift.set,
				Analytics:            analytics,
			}, sfiat.NewStore(a.pool), a.bus, a.authn, a.vault, a.requireAdmin(a.cfg.Admins.Fiat), a.pool, a.now, a.server.Routes)
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
		groups: map[string]func() (runnable, error){
			topics.GroupFiat: func() (runnable, error) {
				h, err := cfiat.NewHandler(caps, a.now, a.log)
				if err != nil {
					return nil, err
				}
				// One worker: a pipelined batch costs two round trips
				// whatever its size, so one larger batch per poll beats two
				// concurrent smaller ones (fewer commits, WAL flushes and
				// reply requests; measured in e2e/bench/README.md). The
				// gather window fills batches at low concurrency (issue 38).
				return a.runner(cpipeline.Config{Group: topics.GroupFiat, Topics: []string{topics.FiatCommands}, Workers: 1,
					Gather: fiatGather}, h)
			},
		},
		background: []func() (runnable, error){
			func() (runnable, error) {
				return cfiat.NewExpirer(sfiat.NewStore(a.pool), requestExpiryInterval, a.now, a.log)
			},
			// Reconciliation drift alerts whether or not an admin looks
			// (ReconcileDrift, deploy/prometheus/alerts.yml).
			func() (runnable, error) {
				return &reconciler{books: sfiat.NewStore(a.pool).Books, gauge: drift, interval: reconcileInterval,
					log: a.log.With("component", "reconciler")}, nil
			},
		},
	}, nil
}

// fiatGather bounds how long the fiat applier holds a poll open for more
// transfers while it is busy: 2 ms, the bound issue 38 set.
const fiatGather = 2 * time.Millisecond
