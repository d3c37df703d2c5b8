package reputation

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
)

// rankPath is the request of GET /rank/:userId.
type rankPath struct {
	UserID string `path:"userId" json:"-" format:"ksuid"`
}

// rank answers a user's public score and rank: no personal data.
func (h *Handlers) rank(c *fiber.Ctx, req *rankPath) error {
	id := req.UserID
	notFound := apierr.New(http.StatusNotFound, schemas.CodeUserNotFound, "no user with this id")
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) || len(id) > 128 {
		return notFound
	}
	ctx := c.UserContext()
	sc, found, err := h.reads.ScoreOf(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		ok, err := h.reads.UserExists(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return notFound
		}
		sc.Rank = schemas.RankOf(0)
	}
	return c.JSON(schemas.ReputationRank{UserID: id, Score: sc.Score, Rank: sc.Rank})
}

// Stats are the reputation statistics.
