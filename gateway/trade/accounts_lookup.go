package trade

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	store "github.com/fintech/platform/storage/trade"
)

// maxEmail bounds the e-mail of a lookup (RFC 5321).
const maxEmail = 254

// lookup finds the account of the user with the given e-mail
// (case-insensitively): { id, owner }, or 404 account_not_found when no such
// user has opened an account (a malformed e-mail names none either).
func (h *Handlers) lookup(c *fiber.Ctx) error {
	var v bind.Validator
	email := text(&v, "email", c.Query("email"))
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
	return c.JSON(fiber.Map{"id": l.ID, "owner": l.Owner})
}
