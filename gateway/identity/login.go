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
	Email        string `json:"email" required:"true" minLength:"1"`
	Password     string `json:"password" required:"true" minLength:"1" maxLength:"128"`
	Code         string `json:"code,omitempty" maxLength:"6" description:"a current TOTP code, for an account with two-factor on"`
	RecoveryCode string `json:"recoveryCode,omitempty" maxLength:"32" description:"an unused recovery code, instead of code; each works once"`
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
	if err := h.secondFactor(c, u.ID, req); err != nil {
		return err
	}
	return h.respondToken(c, http.StatusOK, u)
}

// secondFactor admits an account without two-factor, and one with it only
// with a current, unused TOTP code or an unused recovery code.
func (h *Handlers) secondFactor(c *fiber.Ctx, userID string, req *loginRequest) error {
	enr, err := h.users.TOTP(c.UserContext(), userID)
	if errors.Is(err, postgres.ErrNotFound) || (err == nil && !enr.Confirmed) {
		return nil
	}
	if err != nil {
		return err
	}
	var ok bool
	switch {
	case req.Code != "":
		ok, err = h.useCode(c.UserContext(), enr, userID, req.Code)
	case req.RecoveryCode != "":
		ok, err = h.users.UseRecoveryCode(c.UserContext(), userID, recoveryHash(userID, req.RecoveryCode), h.now().UTC())
	default:
		return apierr.New(http.StatusUnauthorized, schemas.CodeMFARequired,
			"this account has two-factor on: send code (the authenticator app's current code) or recoveryCode")
	}
	if err != nil {
		return err
	}
	if !ok {
		return apierr.New(http.StatusUnauthorized, schemas.CodeInvalidCredentials, "the two-factor code is wrong or was used already")
	}
	return nil
}
