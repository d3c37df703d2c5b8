package identity

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// errReauth is a wrong password or code: one answer for both.
func errReauth() *apierr.Error {
	return apierr.New(http.StatusForbidden, schemas.CodeInvalidCredentials, "the password or the two-factor code is wrong")
}

// Reauthenticate checks a sensitive write's fresh password (minting an API
// key, turning two-factor off, adding or moving a webhook endpoint) and,
// when the account
// has two-factor on, its code (counted against the account's limit of wrong
// codes, like a login's): 403 invalid_credentials for either wrong, 403
// mfa_required without a code, 429 at the limit. A wrong password spends no
// code.
func (h *Handlers) Reauthenticate(c *fiber.Ctx, userID, password, code string) error {
	ctx := c.UserContext()
	u, err := h.users.ByID(ctx, userID)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.AuthRequired()
	}
	if err != nil {
		return err
	}
	pwOK, err := h.pw.Compare(ctx, password, u.PasswordHash)
	if err != nil {
		return hashError(c, err)
	}
	enr, mfa, err := h.confirmedTOTP(ctx, userID)
	if err != nil {
		return err
	}
	if !mfa {
		if !pwOK {
			return errReauth()
		}
		return nil
	}
	if code == "" {
		return apierr.New(http.StatusForbidden, schemas.CodeMFARequired,
			"two-factor is on: send code (a current TOTP code or an unused recovery code) with the password")
	}
	ok, err := h.countedCode(c, userID, func() (bool, error) {
		if !pwOK {
			return false, nil
		}
		if len(code) == int(totpDigits) {
			return h.useCode(ctx, enr, userID, code)
		}
		return h.users.UseRecoveryCode(ctx, userID, recoveryHash(userID, code), h.now().UTC())
	})
	if err != nil {
		return err
	}
	if !ok {
		return errReauth()
	}
	return nil
}

// noticeLimit bounds how long a notice mail may take in the background.
const noticeLimit = 30 * time.Second

// Notify mails the account's owner that what happened on their account
// (what, a sentence), in the background: the request does not wait, and a
// mail that fails is logged, never the request's failure.
func (h *Handlers) Notify(ctx context.Context, userID, what string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noticeLimit)
	go func() {
		defer cancel()
		u, err := h.users.ByID(ctx, userID)
		if err != nil {
			h.cfg.Log.Warn("account notice", "err", err)
			return
		}
		body := "On " + h.now().UTC().Format(time.RFC1123) + ": " + what + "\n\n" +
			"If this was not you, reset your password now (" + h.cfg.BaseURL + ", \"Forgot password\", or POST /api/auth/password/forgot): " +
			"a reset signs out every session and revokes every API key of the account.\n"
		if err := h.mailer.Send(ctx, mail.Message{To: u.Email, Subject: "Security notice: " + what, Body: body}); err != nil {
			h.cfg.Log.Warn("account notice mail", "err", err)
		}
	}()
}
