package trade

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// listResponse is the shape of the module's lists (decisions.md): a page of
// items, the total, and the next page's cursor, null once exhausted.
type listResponse[T any] struct {
	Items      []T     `json:"items"`
	Total      int64   `json:"total"`
	NextCursor *string `json:"nextCursor"`
}

// listAccounts answers the caller's account, opening it (balance 0) on the
// first call. A user has exactly one account, so the list has one item and
// no next page.
func (h *Handlers) listAccounts(c *fiber.Ctx) error {
	p, err := pageQuery(c)
	if err != nil {
		return err
	}
	acc, err := h.accounts.Open(c.UserContext(), caller(c).UserID, schemas.NewID(), h.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return err
	}
	out := listResponse[schemas.TradeAccount]{Items: []schemas.TradeAccount{}, Total: 1}
	if p.After == "" {
		out.Items = append(out.Items, acc.View())
	}
	return c.JSON(out)
}
