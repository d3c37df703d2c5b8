package main

import (
	"strings"

	"github.com/fintech/platform/gateway/server"
	gsign "github.com/fintech/platform/gateway/sign"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/sealed"
	ssign "github.com/fintech/platform/storage/sign"
)

// signModule wires Ed25519 signing under /api/sign. SIGNING_MASTER_KEY may
// list several master keys separated by commas, the current one first: keys
// sealed under an older one still open (and are sealed again under the
// current one on use), so the master key can rotate.
func (a *app) signModule() (module, error) {
	return module{routes: func(r server.Router) error {
		ring, err := sealed.NewKeyring("SIGNING_MASTER_KEY", "sign", strings.Split(a.cfg.SigningKey, ",")...)
		if err != nil {
			return err
		}
		h, err := gsign.NewHandlers(ssign.NewStore(a.pool), ring, a.pool, a.tokens.Require(), a.now, schemas.NewID, a.server.Routes)
		if err != nil {
			return err
		}
		h.Register(r)
		return nil
	}}, nil
}
