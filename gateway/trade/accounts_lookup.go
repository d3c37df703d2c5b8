package trade

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
)

// maxEmail bounds the e-mail of a lookup (RFC 5321).
const maxEmail = 254

// lookup finds the account of the user with the given e-mail
// (case-insensitively): { id, owner }, or 404 account_not_found when no such
// user has opened an account (a malformed e-mail names none either).
// lookupRequest names the e-mail to look up.
type lookupRequest struct {
	Email string `query:"email" json:"-" required:"true" description:"the user's e-mail, case-insensitively"`
}

func (h *Handlers) lookup(c *fiber.Ctx, req *lookupRequest) error {
	var v bind.Validator
	email := text(&v, "email", req.Email)
	if err := v.Err(); err != nil {
		return err
	}
	if !v.Required("email", email) {
		return v.Err()
	}
	if len(email) > maxEmail || !strings.Contains(email, "@") {
		return errAccountNotFound
	}
	l, err := h.accounts.ByEmail(c.UserContext(), email)
	if store.IsNotFound(err) {
		return errAccountNotFound
	}
	if err != nil {
		return err
	}
	return c.JSON(schemas.TradeAccountLookup{ID: l.ID, Owner: l.Owner})
}
