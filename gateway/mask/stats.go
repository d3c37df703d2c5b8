package mask

import (
	"math"

	"github.com/gofiber/fiber/v2"
)

// statsResponse is the caller's roll-up. Spend is in minor units, summed
// over every currency in totalSpendCents and per currency in spendByCurrency.
type statsResponse struct {
	ActiveMasks       int64            `json:"activeMasks"`
	TotalSpendCents   int64            `json:"totalSpendCents"`
	SpendByCurrency   map[string]int64 `json:"spendByCurrency"`
	Charges           int64            `json:"charges"`
	AuthorizedCharges int64            `json:"authorizedCharges"`
	DeclinedCharges   int64            `json:"declinedCharges"`
	// DeclineRate is declined / all charges, 0..1 (0 without charges).
	DeclineRate float64 `json:"declineRate"`
	// MeanRiskScore is the mean score of all charges (0 without charges).
	MeanRiskScore float64 `json:"meanRiskScore"`
}

// stats answers the caller's roll-up: active masks, total spend, decline
// rate and mean risk score.
func (h *Handlers) stats(c *fiber.Ctx) error {
	s, err := h.reader.Stats(c.UserContext(), caller(c), h.now().UTC())
	if err != nil {
		return err
	}
	out := statsResponse{
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
