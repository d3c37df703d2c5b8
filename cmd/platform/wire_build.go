package main

import (
	gbuild "github.com/fintech/platform/gateway/build"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	sbuild "github.com/fintech/platform/storage/build"
)

// buildModule wires the partner vacancy feed: employer routes under
// /api/build, the keyed partner API, RSS, widget, sitemap and public pages.
// It writes Postgres directly (low write rate) with its events in the outbox,
// so it has no consumer group.
func (a *app) buildModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			h, err := gbuild.NewHandlers(sbuild.NewStore(a.pool), a.limiter, a.pool, a.authn.Require(), a.now, a.server.Routes,
				gbuild.Config{PublicBaseURL: a.cfg.PublicBaseURL, PlanLimit: a.cfg.BuildPlanLimit,
					Budgets: a.budgets})
			if err != nil {
				return err
			}
			// The partner API's budget is per key (per IP without one).
			a.limiter.KeyBy(ratelimit.Partner, gbuild.RateKey)
			h.Register(r)
			return nil
		},
	}, nil
}
