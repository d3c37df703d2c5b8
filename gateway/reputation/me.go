package reputation

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

func (h *Handlers) me(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	ctx := c.UserContext()
	sc, found, err := h.reads.ScoreOf(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !found {
		sc.Rank = schemas.RankOf(0)
	}
	es, err := h.reads.Recent(ctx, p.UserID, 50)
	if err != nil {
		return err
	}
	out := schemas.ReputationMe{UserID: p.UserID, Score: sc.Score, Rank: sc.Rank, Events: make([]schemas.ReputationEventView, 0, len(es))}
	for _, e := range es {
		j := schemas.ReputationEventView{ID: e.ID, Kind: e.Kind, SourceModule: e.SourceModule, Weight: e.Weight,
			ScoreAfter: e.ScoreAfter, RankAfter: e.RankAfter, CreatedAt: e.CreatedAt.UTC()}
		if e.SourceID != "" {
			s := e.SourceID
			j.SourceID = &s
		}
		if e.Meta != nil {
			j.Meta = schemas.RawObject(e.Meta)
		}
		out.Events = append(out.Events, j)
	}
	return c.JSON(out)
}
