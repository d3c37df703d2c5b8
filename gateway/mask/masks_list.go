package mask

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
)

// listMasksRequest is a page of the caller's masks.
type listMasksRequest struct{ bind.TimePaging }

// listMasks answers the caller's active, unexpired masks with their
// remaining balance, newest first, paginated with cursor and limit.
func (h *Handlers) listMasks(c *fiber.Ctx, req *listMasksRequest) error {
	p := req.Page()
	now := h.now().UTC()
	rows, err := h.reader.ListActive(c.UserContext(), caller(c), now, req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, p.Limit, func(r store.MaskRow) string { return schemas.Position{At: r.CreatedAt, ID: r.ID}.String() },
		func(r store.MaskRow) schemas.Mask { return r.View(now) }))
}
