package partner

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// upcomingRequest is the schedule's limit; a cursor is checked but the
// schedule is one page.
type upcomingRequest struct{ bind.Paging }

// upcoming answers, without authentication, the tournaments accepting
// entries (starting in the future, entries below capacity), soonest first;
// `limit` (default 50, max 200) bounds them.
func (h *Handlers) upcoming(c *fiber.Ctx, req *upcomingRequest) error {
	p := req.Page()
	rows, err := h.reader.Upcoming(c.UserContext(), h.now().UTC(), p.Limit)
	if err != nil {
		return err
	}
	out := schemas.UpcomingTournaments{Items: make([]schemas.Tournament, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, r.View())
	}
	return c.JSON(out)
}
