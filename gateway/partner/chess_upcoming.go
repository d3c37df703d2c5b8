package partner

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

type upcomingResponse struct {
	Items []schemas.Tournament `json:"items"`
}

// upcoming answers, without authentication, the tournaments accepting
// entries (starting in the future, entries below capacity), soonest first;
// `limit` (default 50, max 200) bounds them.
func (h *Handlers) upcoming(c *fiber.Ctx) error {
	p, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	rows, err := h.reader.Upcoming(c.UserContext(), h.now().UTC(), p.Limit)
	if err != nil {
		return err
	}
	out := upcomingResponse{Items: make([]schemas.Tournament, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, r.View())
	}
	return c.JSON(out)
}
