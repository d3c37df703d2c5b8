package identity

import (
	"errors"
	"net/http"
	"strings"

	"github.com/alexedwards/argon2id"
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
		_, _ = argon2id.ComparePasswordAndHash(req.Password, h.dummyHash)
		return invalid
	}
	if err != nil {
		return err
	}
	ok, err := argon2id.ComparePasswordAndHash(req.Password, u.PasswordHash)
	if err != nil {
		return err
	}
	if !ok {
		return invalid
	}
	return h.respondToken(c, http.StatusOK, u)
}
