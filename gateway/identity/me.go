package identity

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// me answers the caller's profile and the role read from the database now.
func (h *Handlers) me(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	u, err := h.users.ByID(c.UserContext(), p.UserID)
	if errors.Is(err, postgres.ErrNotFound) {
		// A valid token of a deleted account authenticates nobody.
		return apierr.AuthRequired()
	}
	if err != nil {
		return err
	}
	role, err := h.roles.Role(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	enr, err := h.users.TOTP(c.UserContext(), u.ID)
	if err != nil && !errors.Is(err, postgres.ErrNotFound) {
		return err
	}
	return c.JSON(schemas.Profile{ID: u.ID, Email: u.Email, Name: u.Name, Role: role, MFAEnabled: err == nil && enr.Confirmed})
}
