package main

import (
	"context"
	"net/url"
	"path/filepath"
	"time"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/consumers/retention"
	"github.com/fintech/platform/gateway/identity"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/storage/budget"
	fiatstore "github.com/fintech/platform/storage/fiat"
	identitystore "github.com/fintech/platform/storage/identity"
	webhookstore "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
)

func (a *app) platformModule() (module, error) {
	return module{routes: func(r server.Router) error {
		h, err := platform.NewHandlers(platform.Build{
			Service: "platform", Version: apiVersion, Release: release,
			Environment: a.cfg.Environment, Processor: a.cfg.processorMode(), StartedAt: a.now().UTC(),
			SDKPackages: []string{platform.SDKPackage},
		}, a.pool, a.now, a.server.Routes)
		if err != nil {
			return err
		}
		h.Register(r)
		return nil
	}}, nil
}

// identityHandlers builds the identity module's handlers once: the
// identity routes serve them, and other modules' sensitive writes (a
// webhook endpoint) re-authenticate and mail notices with them.
func (a *app) identityHandlers() (*identity.Handlers, error) {
	if a.accounts != nil {
		return a.accounts, nil
	}
	mailer, err := mail.New(a.cfg.SMTPURL, "no-reply@"+hostOf(a.cfg.PublicBaseURL), filepath.Join(a.cfg.DataDir, "mail"), a.log)
	if err != nil {
		return nil, err
	}
	h, err := identity.NewHandlers(identitystore.NewUsers(a.pool), a.authn, a.guard, mailer, a.pool, a.now,
		a.server.Routes, identity.Config{BaseURL: a.cfg.PublicBaseURL, Vault: a.vault, Log: a.log})
	if err != nil {
		return nil, err
	}
	a.accounts = h
	return h, nil
}

func (a *app) identityModule() (module, error) {
	return module{routes: func(r server.Router) error {
		h, err := a.identityHandlers()
		if err != nil {
			return err
		}
		h.Register(r)
		keys, err := identity.NewKeyHandlers(identitystore.NewAPIKeys(a.pool), a.authn, h, a.now)
		if err != nil {
			return err
		}
		keys.Register(r)
		return nil
	}}, nil
}

func (a *app) relayModule() (module, error) {
	return module{background: []func() (runnable, error){
		func() (runnable, error) {
			cl, err := topics.NewClient(a.brokers)
			if err != nil {
				return nil, err
			}
			return relay.New(a.pool, topics.NewProducer(cl), a.reg, a.log), nil
		},
		func() (runnable, error) {
			return retention.NewExpirer(a.pool, time.Hour, a.cfg.ProcessedRetention, a.now, a.log), nil
		},
		func() (runnable, error) {
			// Ended sessions, reset links, revoked or expired API keys and
			// second-factor attempts: kept 30 days for the record, then
			// pruned (issue 45).
			users := identitystore.NewUsers(a.pool)
			return retention.NewPruner("accounts", users.PruneAccounts, time.Hour, 30*24*time.Hour, a.now, a.log), nil
		},
		func() (runnable, error) {
			// Abuse-budget windows end after a month at most: keep two.
			return retention.NewPruner("abuse-budgets", func(ctx context.Context, before time.Time) (int64, error) {
				return budget.Prune(ctx, a.pool, before)
			}, time.Hour, 62*24*time.Hour, a.now, a.log), nil
		},
		func() (runnable, error) {
			// Verification links: 24 hours to use, a day of the per-address
			// cap; kept a week.
			return retention.NewPruner("email-verifications", identitystore.NewUsers(a.pool).PruneVerifications,
				time.Hour, 7*24*time.Hour, a.now, a.log), nil
		},
		func() (runnable, error) {
			// Finished webhook deliveries: 30 days (webhook.test ones 7),
			// then the events nothing names.
			st := webhookstore.NewStore(a.pool)
			return retention.NewPruner("webhook-deliveries", func(ctx context.Context, before time.Time) (int64, error) {
				return st.PruneFinished(ctx, before, before.Add(23*24*time.Hour))
			}, time.Hour, 30*24*time.Hour, a.now, a.log), nil
		},
		func() (runnable, error) {
			// A refused withdrawal's sealed destination: kept as long as
			// its command could still be redelivered (7 days).
			return retention.NewPruner("refused-withdrawal-destinations", func(ctx context.Context, before time.Time) (int64, error) {
				return fiatstore.PruneRefusedDestinations(ctx, a.pool, before)
			}, time.Hour, topics.CommandRetention(), a.now, a.log), nil
		},
	}}, nil
}

// hostOf returns the host name of a URL, for the sender address of mail.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}
