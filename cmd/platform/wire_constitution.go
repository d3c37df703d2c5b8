package main

import (
	gconstitution "github.com/fintech/platform/gateway/constitution"
	"github.com/fintech/platform/gateway/server"
	sconstitution "github.com/fintech/platform/storage/constitution"
)

// constitutionModule wires the constitution scenario tool (/api/constitution)
// and the planet catalog (/api/planet), both also under /api-backend. It has
// no consumer group: the gateway writes Postgres directly and queues its
// events on events.constitution through the outbox.
func (a *app) constitutionModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			var advisor gconstitution.Advisor = gconstitution.Builtin{}
			if a.cfg.AIURL != "" {
				m, err := gconstitution.NewModelAdvisor(gconstitution.ModelConfig{
					BaseURL: a.cfg.AIURL, APIKey: a.cfg.AIKey, Model: a.cfg.AIModel, Timeout: a.cfg.AITimeout,
				}, a.log)
				if err != nil {
					return err
				}
				advisor = m
			}
			st := sconstitution.NewStore(a.pool)
			h, err := gconstitution.NewHandlers(st, st, st, advisor, a.pool, a.authn.Require(), a.authn.Optional(),
				a.now, a.server.Routes, gconstitution.Config{AILimit: a.cfg.AIMonthlyLimit, AITimeout: a.cfg.AITimeout,
					Budgets: a.budgets})
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
	}, nil
}
