package main

import (
	"context"
	"sort"

	dispatch "github.com/fintech/platform/consumers/webhooks"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/server"
	gwebhooks "github.com/fintech/platform/gateway/webhooks"
	webhookstore "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
)

// webhooksModule wires the webhooks module: its routes (subscriptions, the
// delivery log, the admin stream and its page), the dispatcher group that
// turns events into delivery rows, and the scheduler that delivers them.
// The admin stream's hub runs wherever the routes are served and stops when
// the HTTP server shuts down.
func (a *app) webhooksModule() (module, error) {
	st := webhookstore.NewStore(a.pool)
	// The all-events audience is re-checked at every batch: in production
	// only an admin with two-factor on keeps it.
	st.RequireAdminMFA(!a.cfg.development())
	sched, err := dispatch.NewScheduler(dispatch.SchedulerConfig{
		Schedule: a.cfg.WebhookRetry,
		Timeout:  a.cfg.WebhookTimeout,
	}, st, dispatch.NewSender(a.cfg.WebhookTimeout, a.cfg.WebhookPrivate, a.vault, a.now), a.reg, a.log, a.now)
	if err != nil {
		return module{}, err
	}
	admins := make([]string, 0, len(a.cfg.Admins.Fiat))
	for e := range a.cfg.Admins.Fiat {
		admins = append(admins, e)
	}
	sort.Strings(admins)
	return module{
		routes: func(r server.Router) error {
			hub, err := gwebhooks.NewHub(gwebhooks.HubConfig{}, a.brokers, dispatch.StreamFormat{}, a.log, a.now)
			if err != nil {
				return err
			}
			accounts, err := a.identityHandlers()
			if err != nil {
				return err
			}
			allEvents := func(ctx context.Context, p auth.Principal) (bool, error) {
				return a.guard.AllEvents(ctx, p, a.cfg.Admins.Fiat)
			}
			h, err := gwebhooks.NewHandlers(st, hub, dispatch.NewAudience(st), sched, a.authn, a.requireAdmin(a.cfg.Admins.Fiat), a.vault, a.now,
				gwebhooks.Config{AllowPrivate: a.cfg.WebhookPrivate, Heartbeat: a.cfg.StreamHeartbeat,
					Reauth: accounts, AllEvents: allEvents})
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			a.server.App.Hooks().OnShutdown(func() error { cancel(); return nil })
			go func() { _ = hub.Run(ctx) }()
			return h.Register(r)
		},
		groups: map[string]func() (runnable, error){
			topics.GroupWebhooks: func() (runnable, error) {
				return dispatch.NewDispatcher(a.brokers, st, admins, sched, a.log, a.now)
			},
		},
		background: []func() (runnable, error){
			func() (runnable, error) { return sched, nil },
		},
	}, nil
}
