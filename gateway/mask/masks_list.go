package mask

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
)

// listResponse is the shape of the module's list endpoints: a page of items
// and the cursor of the next page (null when the list is exhausted).
type listResponse[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// page trims a result fetched with limit+1 rows and computes the next cursor.
func page[R, T any](rows []R, limit int, id func(R) string, view func(R) T) listResponse[T] {
	out := listResponse[T]{Items: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		next := bind.Cursor(id(rows[len(rows)-1]))
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, view(r))
	}
	return out
}

// listMasks answers the caller's active, unexpired masks with their
// remaining balance, newest first, paginated with cursor and limit.
func (h *Handlers) listMasks(c *fiber.Ctx) error {
	p, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	now := h.now().UTC()
	rows, err := h.reader.ListActive(c.UserContext(), caller(c), now, p.After, p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(page(rows, p.Limit, func(r store.MaskRow) string { return r.ID },
		func(r store.MaskRow) schemas.Mask { return r.View(now) }))
}
