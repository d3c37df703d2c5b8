package identity

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// loginRequest is the body of POST /login.
type loginRequest struct {
	Email    string `json:"email" required:"true" minLength:"1"`
	Password string `json:"password" required:"true" minLength:"1" maxLength:"128"`
}

// login answers a token for the right e-mail and password; an unknown
// e-mail takes as long as a wrong password.
func (h *Handlers) login(c *fiber.Ctx, req *loginRequest) error {
	invalid := apierr.New(http.StatusUnauthorized, schemas.CodeInvalidCredentials, "wrong e-mail or password")
	u, err := h.users.ByEmail(c.UserContext(), strings.TrimSpace(req.Email))
	if errors.Is(err, postgres.ErrNotFound) {
		if _, err := h.pw.Compare(c.UserContext(), req.Password, h.dummyHash); err != nil {
			return hashError(c, err)
		}
		return invalid
	}
	if err != nil {
		return err
	}
	ok, err := h.pw.Compare(c.UserContext(), req.Password, u.PasswordHash)
	if err != nil {
		return hashError(c, err)
	}
	if !ok {
		return invalid
	}
	return h.respondToken(c, http.StatusOK, u)
}
