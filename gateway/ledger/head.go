package ledger

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/ledger"
)

// head answers the chain head.
func (h *Handlers) head(c *fiber.Ctx, _ *server.NoRequest) error {
	head, e, ok, err := h.reads.Head(c.UserContext())
	if err != nil {
		return err
	}
	out := schemas.LedgerHead{Hash: head.Hash, Height: head.Height}
	if ok {
		ts := store.FormatTimestamp(e.Timestamp)
		out.ID, out.Timestamp = &e.ID, &ts
	}
	return c.JSON(out)
}
