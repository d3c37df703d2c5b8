package main

import (
	"context"

	"github.com/fintech/platform/gateway/console"
	"github.com/fintech/platform/gateway/dlq"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/storage/audit"
	"github.com/fintech/platform/storage/clickhouse"
	dlqstore "github.com/fintech/platform/storage/dlq"
	webhookstore "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
)

// consoleModule wires the admin console (/admin) and its data routes,
// the dead-letter tooling among them. Its broker client and the live event
// tap stop when the HTTP server shuts down.
func (a *app) consoleModule() (module, error) {
	return module{routes: func(r server.Router) error {
		ops, err := topics.NewOps(a.brokers)
		if err != nil {
			return err
		}
		tooling, err := dlq.New(ops, dlqstore.NewStore(a.pool), a.now)
		if err != nil {
			ops.Close()
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		a.server.App.Hooks().OnShutdown(func() error { cancel(); ops.Close(); return nil })
		h, err := console.NewHandlers(ctx, tooling,
			clickhouse.NewAnalytics(a.clickhouseLazy(), a.clickhouseDatabase()),
			console.NewLive(a.brokers, a.log, a.now, console.Window), ops, webhookstore.NewStore(a.pool),
			audit.NewStore(a.pool), console.SlowView{Source: a.server, Threshold: a.cfg.SlowRequest, TraceURL: a.cfg.TraceURL}, a.authn, a.requireAdmin(a.cfg.Admins.Fiat), a.now)
		if err != nil {
			return err
		}
		h.Register(r)
		return nil
	}}, nil
}
