package mask

import (
	"math"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// stats answers the caller's roll-up: active masks, total spend, decline
// rate and mean risk score.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	s, err := h.reader.Stats(c.UserContext(), caller(c), h.now().UTC())
	if err != nil {
		return err
	}
	out := schemas.MaskStats{
		ActiveMasks: s.ActiveMasks, TotalSpendCents: s.TotalSpendCents, SpendByCurrency: s.SpendByCurrency,
		Charges: s.Charges, AuthorizedCharges: s.Charges - s.Declined, DeclinedCharges: s.Declined,
		MeanRiskScore: round(s.MeanRiskScore, 2),
	}
	if s.Charges > 0 {
		out.DeclineRate = round(float64(s.Declined)/float64(s.Charges), 4)
	}
	return c.JSON(out)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
