package main

import (
	"time"

	"github.com/fintech/platform/consumers/retention"
	"github.com/fintech/platform/gateway/server"
	gsign "github.com/fintech/platform/gateway/sign"
	"github.com/fintech/platform/schemas"
	ssign "github.com/fintech/platform/storage/sign"
)

// signModule wires Ed25519 signing under /api/sign. SIGNING_MASTER_KEY may
// list several master keys separated by commas, the current one first: keys
// sealed under an older one still open (and are sealed again under the
// current one on use), so the master key can rotate.
func (a *app) signModule() (module, error) {
	st := ssign.NewStore(a.pool)
	return module{routes: func(r server.Router) error {
		h, err := gsign.NewHandlers(st, a.signRing, a.pool, a.authn.Require(), a.now, schemas.NewID, a.server.Routes)
		if err != nil {
			return err
		}
		h.Register(r)
		return nil
	}, background: []func() (runnable, error){
		// Signed payloads are kept schemas.SignRetention (deploy/docs/security.md).
		func() (runnable, error) {
			return retention.NewPruner("signatures", st.PruneSignatures, time.Hour, schemas.SignRetention, a.now, a.log), nil
		},
	}}, nil
}
