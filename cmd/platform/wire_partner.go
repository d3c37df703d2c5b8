package main

import (
	gpartner "github.com/fintech/platform/gateway/partner"
	"github.com/fintech/platform/gateway/server"
	spartner "github.com/fintech/platform/storage/partner"
)

// partnerModule wires the partner rails: the signed receivers and reads
// under /api/rights, /api/chess and /api/cert, and /api/ecosystem/earnings.
// They write Postgres directly (row and events.partner event in one
// transaction), so there is no consumer group.
func (a *app) partnerModule() (module, error) {
	return module{
		routes: func(r server.Router) error {
			st := spartner.NewStore(a.pool)
			secrets := gpartner.Secrets{HMAC: a.cfg.Partner.HMAC, Rights: a.cfg.Partner.Rights,
				Chess: a.cfg.Partner.Chess, Cert: a.cfg.Partner.Cert, RequireHMAC: a.cfg.Partner.RequireHMAC,
				RightsHMAC: a.cfg.Partner.RightsHMAC, ChessHMAC: a.cfg.Partner.ChessHMAC, CertHMAC: a.cfg.Partner.CertHMAC}
			h, err := gpartner.NewHandlers(st, st, a.pool, a.guard.RequireVerified(a.authn), secrets, a.now, a.server.Routes)
			if err != nil {
				return err
			}
			h.Register(r)
			return nil
		},
	}, nil
}
