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

// invalidLogin is every refused login, whichever of e-mail, password or
// code was wrong.
func invalidLogin() *apierr.Error {
	return apierr.New(http.StatusUnauthorized, schemas.CodeInvalidCredentials, "wrong e-mail, password or two-factor code")
}

// login answers a token for the right e-mail and password, and for an
// account with two-factor on the right code too. An unknown e-mail takes as
// long as a wrong password. For an account with two-factor on, the answer
// never tells whether the password was right before a code is checked:
// without a code it is mfa_required either way, and with one a wrong
// password and a wrong code are the same invalid_credentials, each counted
// against the account's limit of wrong codes (countedCode), checked first.
func (h *Handlers) login(c *fiber.Ctx, req *loginRequest) error {
	u, err := h.users.ByEmail(c.UserContext(), strings.TrimSpace(req.Email))
	if errors.Is(err, postgres.ErrNotFound) {
		if _, err := h.pw.Compare(c.UserContext(), req.Password, h.dummyHash); err != nil {
			return hashError(c, err)
		}
		return invalidLogin()
	}
	if err != nil {
		return err
	}
	pwOK, err := h.pw.Compare(c.UserContext(), req.Password, u.PasswordHash)
	if err != nil {
		return hashError(c, err)
	}
	enr, mfa, err := h.confirmedTOTP(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	if !mfa {
		if !pwOK {
			return invalidLogin()
		}
		return h.respondToken(c, http.StatusOK, u)
	}
	if req.Code == "" && req.RecoveryCode == "" {
		return apierr.New(http.StatusUnauthorized, schemas.CodeMFARequired,
			"this account has two-factor on: send the password with code (the authenticator app's current code) or recoveryCode")
	}
	ok, err := h.countedCode(c, u.ID, func() (bool, error) {
		if !pwOK {
			// A wrong password spends no code: the owner's current one
			// stays usable.
			return false, nil
		}
		return h.useFactor(c.UserContext(), enr, u.ID, req.Code, req.RecoveryCode)
	})
	if err != nil {
		return err
	}
	if !ok {
		return invalidLogin()
	}
	return h.respondToken(c, http.StatusOK, u)
}
