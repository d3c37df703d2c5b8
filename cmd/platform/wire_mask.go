package main

import (
	cmask "github.com/fintech/platform/consumers/mask"
	cpipeline "github.com/fintech/platform/consumers/pipeline"
	gmask "github.com/fintech/platform/gateway/mask"
	"github.com/fintech/platform/gateway/server"
	smask "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/topics"
)

// maskModule wires the mask module: its routes under /api/mask and the
// mask-applier group that decides every command of mask.commands.
func (a *app) maskModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			h, err := gmask.NewHandlers(smask.NewMasks(a.pool), a.bus, a.pool, a.authn.Require(), a.now, a.server.Routes)
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
		groups: map[string]func() (runnable, error){
			topics.GroupMask: func() (runnable, error) {
				h, err := cmask.NewHandler(smask.NewStore(), a.now)
				if err != nil {
					return nil, err
				}
				return a.runner(cpipeline.Config{Group: topics.GroupMask, Topics: []string{topics.MaskCommands}, Workers: 4}, h)
			},
		},
	}, nil
}
