package trade

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// listAccountsRequest is a page of the caller's accounts.
type listAccountsRequest struct{ paging }

// listAccounts answers the caller's account, opening it (balance 0) on the
// first call. A user has exactly one account, so the list has one item and
// no next page.
func (h *Handlers) listAccounts(c *fiber.Ctx, req *listAccountsRequest) error {
	acc, err := h.accounts.Open(c.UserContext(), caller(c).UserID, schemas.NewID(), h.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return err
	}
	out := schemas.TradeAccountList{Items: []schemas.TradeAccount{}, Total: 1}
	if req.Page().After == "" {
		out.Items = append(out.Items, acc.View())
	}
	return c.JSON(out)
}
