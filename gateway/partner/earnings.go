package partner

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
)

// earnings answers what the partner rails recorded for the caller's e-mail:
// totals per rail and overall, and per source (qright, cyberchess, planet,
// always all three, in that order). Nothing here moves money.
func (h *Handlers) earnings(c *fiber.Ctx, _ *server.NoRequest) error {
	e, err := h.reader.Earnings(c.UserContext(), callerEmail(c))
	if err != nil {
		return err
	}
	src := func(label string, t store.SourceTotal) schemas.SourceEarnings {
		s := schemas.SourceEarnings{Source: label, Amount: t.Amount, Count: t.Count}
		if t.Last != nil {
			last := t.Last.UTC()
			s.Last = &last
		}
		return s
	}
	return c.JSON(schemas.Earnings{
		Totals: schemas.EarningsTotals{Rights: e.Rights.Amount, Chess: e.Chess.Amount, Planet: e.Cert.Amount,
			All: e.Rights.Amount + e.Chess.Amount + e.Cert.Amount},
		PerSource: []schemas.SourceEarnings{
			src(schemas.SourceRights, e.Rights), src(schemas.SourceChess, e.Chess), src(schemas.SourceCert, e.Cert),
		},
	})
}
