package main

import (
	"time"

	cpipeline "github.com/fintech/platform/consumers/pipeline"
	creputation "github.com/fintech/platform/consumers/reputation"
	gwreputation "github.com/fintech/platform/gateway/reputation"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/storage/clickhouse"
	repstore "github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// reputationModule wires the reputation module: its routes, consumer groups and
// background loops.
func (a *app) reputationModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			h, err := gwreputation.NewHandlers(a.pool, repstore.NewStore(a.pool),
				clickhouse.NewAnalytics(a.clickhouseLazy(), a.clickhouseDatabase()),
				a.bus, a.authn, a.requireAdmin(a.cfg.Admins.Reputation), a.now, a.server.Routes,
				gwreputation.Config{ServiceKey: a.cfg.ReputationKey})
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
		groups: map[string]func() (runnable, error){
			topics.GroupReputation: func() (runnable, error) {
				return a.runner(cpipeline.Config{Group: topics.GroupReputation, Topics: creputation.Topics(),
					MinBytes: 256 << 10, MaxWait: 200 * time.Millisecond}, creputation.NewApplier(a.now))
			},
		},
	}, nil
}
