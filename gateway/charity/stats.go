package charity

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
)

type categoryView struct {
	Category  string `json:"category"`
	RaisedKzt int64  `json:"raisedKzt"`
}

type statsResponse struct {
	TotalRaisedKzt int64          `json:"totalRaisedKzt"`
	DonorCount     int64          `json:"donorCount"`
	TopCategories  []categoryView `json:"topCategories"`
}

// stats answers the total raised, the distinct donors (anonymous ones
// included) and the categories that raised most, from the ClickHouse copy
// of donation.received (it lags Postgres by about a second).
func (h *Handlers) stats(c *fiber.Ctx) error {
	s, err := h.d.Stats.CharityStats(c.UserContext())
	if err != nil {
		return fmt.Errorf("charity stats: %w: %w", apierr.Unavailable(), err)
	}
	out := statsResponse{TotalRaisedKzt: s.TotalRaisedKzt, DonorCount: s.DonorCount, TopCategories: []categoryView{}}
	for _, t := range s.TopCategories {
		out.TopCategories = append(out.TopCategories, categoryView{Category: t.Category, RaisedKzt: t.RaisedKzt})
	}
	return c.JSON(out)
}
