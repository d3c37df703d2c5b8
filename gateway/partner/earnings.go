package partner

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/partner"
)

// earningsTotals are KZT minor units per rail; planet is the cert payouts.
type earningsTotals struct {
	Rights int64 `json:"rights"`
	Chess  int64 `json:"chess"`
	Planet int64 `json:"planet"`
	All    int64 `json:"all"`
}

// sourceEarnings is one rail under its interface label; Last is the time of
// its newest record, null when none.
type sourceEarnings struct {
	Source string     `json:"source"`
	Amount int64      `json:"amount"`
	Count  int64      `json:"count"`
	Last   *time.Time `json:"last"`
}

type earningsResponse struct {
	Totals    earningsTotals   `json:"totals"`
	PerSource []sourceEarnings `json:"perSource"`
}

// earnings answers what the partner rails recorded for the caller's e-mail:
// totals per rail and overall, and per source (qright, cyberchess, planet,
// always all three, in that order). Nothing here moves money.
func (h *Handlers) earnings(c *fiber.Ctx) error {
	e, err := h.reader.Earnings(c.UserContext(), callerEmail(c))
	if err != nil {
		return err
	}
	src := func(label string, t store.SourceTotal) sourceEarnings {
		s := sourceEarnings{Source: label, Amount: t.Amount, Count: t.Count}
		if t.Last != nil {
			last := t.Last.UTC()
			s.Last = &last
		}
		return s
	}
	return c.JSON(earningsResponse{
		Totals: earningsTotals{Rights: e.Rights.Amount, Chess: e.Chess.Amount, Planet: e.Cert.Amount,
			All: e.Rights.Amount + e.Chess.Amount + e.Cert.Amount},
		PerSource: []sourceEarnings{
			src(schemas.SourceRights, e.Rights), src(schemas.SourceChess, e.Chess), src(schemas.SourceCert, e.Cert),
		},
	})
}
