package main

import (
	cfiat "github.com/fintech/platform/consumers/fiat"
	cpipeline "github.com/fintech/platform/consumers/pipeline"
	gfiat "github.com/fintech/platform/gateway/fiat"
	"github.com/fintech/platform/gateway/server"
	sfiat "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// fiatModule wires the fiat module: its routes under /api/fiat and the
// fiat-applier consumer group of fiat.commands.
func (a *app) fiatModule() (module, error) {
	caps := cfiat.Caps{PerTransfer: a.cfg.Caps.PerTransfer, DailyDeposit: a.cfg.Caps.DailyDeposit, Monthly: a.cfg.Caps.Monthly}
	return module{
		routes: func(r server.Router) error {
			h, err := gfiat.NewHandlers(gfiat.Config{
				PublicBaseURL:  a.cfg.PublicBaseURL,
				WebhookSecret:  a.cfg.ProcessorHook,
				ProcessorKey:   a.cfg.ProcessorKey,
				KYCAutoApprove: a.cfg.KYCAutoApprove,
				Admins:         a.cfg.Admins.Fiat,
				Routes:         a.server.Routes,
				Caps:           caps,
			}, sfiat.NewStore(a.pool), a.bus, a.tokens, a.pool, a.now)
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
				return cpipeline.NewRunner(cpipeline.Config{Group: topics.GroupFiat, Topics: []string{topics.FiatCommands},
					Brokers: a.brokers}, a.pool, h, a.metrics, a.log)
			},
		},
	}, nil
}
