package charity

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// stats answers the total raised and the categories that raised most, from
// the ClickHouse copy of donation.received (it lags Postgres by about a
// second), and the distinct donors (anonymous ones included) from Postgres:
// the analytics copy does not keep who gave anonymously.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	s, err := h.analytics.CharityStats(c.UserContext())
	if err != nil {
		return fmt.Errorf("charity stats: %w: %w", apierr.Unavailable(), err)
	}
	donors, err := h.reader.DistinctDonors(c.UserContext())
	if err != nil {
		return fmt.Errorf("charity stats: %w", err)
	}
	out := schemas.CharityStats{TotalRaisedKzt: s.TotalRaisedKzt, DonorCount: donors, TopCategories: []schemas.CharityCategory{}}
	for _, t := range s.TopCategories {
		out.TopCategories = append(out.TopCategories, schemas.CharityCategory{Category: t.Category, RaisedKzt: t.RaisedKzt})
	}
	return c.JSON(out)
}
