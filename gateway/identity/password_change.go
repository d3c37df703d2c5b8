package identity

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// changePasswordRequest is the body of POST /password.
type changePasswordRequest struct {
	CurrentPassword string `json:"currentPassword" required:"true" minLength:"1" maxLength:"128"`
	NewPassword     string `json:"newPassword" required:"true" minLength:"8" maxLength:"128" description:"8 to 128 characters, not one of the 10,000 most common passwords"`
}

// Validate applies the password rules to the new password.
func (req *changePasswordRequest) Validate() error {
	return passwordField("newPassword", req.NewPassword)
}

// passwordField answers a password that breaks the rules as the field's
// validation error.
func passwordField(field, password string) error {
	if err := ValidatePassword(password); err != nil {
		return apierr.Validation(map[string]string{field: err.Error()})
	}
	return nil
}

func (h *Handlers) registerPasswords(root, g server.Router, require fiber.Handler) {
	server.Post(g, "/password", server.Op[changePasswordRequest]{
		Summary:     "Change the caller's password",
		Description: "Checks the current password and sets the new one; every other session of the caller ends (this one goes on) and every API key of the caller is revoked. Password rules: " + PasswordRules + ".",
		Class:       ratelimit.Auth, Handle: h.changePassword,
		Responses: []server.Response{
			{Status: http.StatusNoContent, Description: "the password changed; the other sessions ended"},
			server.Fails(http.StatusForbidden, "invalid_credentials: the current password is wrong"),
		},
	}, require)
	server.Post(g, "/password/forgot", server.Op[forgotRequest]{
		Summary:     "Mail a one-time password-reset link",
		Description: "Mails the account of the address a link `{PUBLIC_BASE_URL}/reset-password?token=…`, valid 30 minutes and once. Answers 202 with the same body, in the same time, whether or not an account has the address. An account is mailed at most 5 links a day; beyond that nothing is sent (the answer is the same).",
		Class:       ratelimit.Auth, Public: true, Handle: h.forgotPassword,
		Responses: []server.Response{
			server.Answers(http.StatusAccepted, "accepted: a link is mailed if an account has this address", schemas.PasswordResetRequested{}),
		},
	})
	server.Post(g, "/password/reset", server.Op[resetRequest]{
		Summary:     "Set a new password with a reset link's token",
		Description: "Spends the link's token, sets the new password, ends every session of the account and revokes every API key of it. Password rules: " + PasswordRules + ".",
		Caller:      "anyone holding the one-time token; no bearer token",
		Class:       ratelimit.Auth, Public: true, Handle: h.resetPassword,
		Responses: []server.Response{
			{Status: http.StatusNoContent, Description: "the password changed; every session ended"},
			server.Fails(http.StatusBadRequest, "verification_invalid: the token is unknown, used or expired"),
		},
	})
	registerResetPage(root)
}

// changePassword sets a new password after checking the current one and
// ends the caller's other sessions in the same transaction.
func (h *Handlers) changePassword(c *fiber.Ctx, req *changePasswordRequest) error {
	p, _ := auth.User(c)
	u, err := h.users.ByID(c.UserContext(), p.UserID)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.AuthRequired()
	}
	if err != nil {
		return err
	}
	ok, err := h.pw.Compare(c.UserContext(), req.CurrentPassword, u.PasswordHash)
	if err != nil {
		return hashError(c, err)
	}
	if !ok {
		return apierr.New(http.StatusForbidden, schemas.CodeInvalidCredentials, "the current password is wrong")
	}
	hash, err := h.pw.Hash(c.UserContext(), req.NewPassword)
	if err != nil {
		return hashError(c, err)
	}
	ended, err := h.users.SetPassword(c.UserContext(), u.ID, hash, p.SessionID, h.now().UTC())
	if err != nil {
		return err
	}
	h.ended(ended...)
	return c.SendStatus(http.StatusNoContent)
}
