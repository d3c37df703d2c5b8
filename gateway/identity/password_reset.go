package identity

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// resetTTL is how long a password-reset link works.
const resetTTL = 30 * time.Minute

// resetMailSlots bounds the reset mails prepared at once in the background;
// resetMailWait is how long a request waits for a slot (the same for known
// and unknown addresses).
const (
	resetMailSlots = 8
	resetMailWait  = 2 * time.Second
	resetMailLimit = 30 * time.Second
)

// forgotRequest is the body of POST /password/forgot.
type forgotRequest struct {
	Email string `json:"email" required:"true" minLength:"1" maxLength:"254"`
}

// resetRequest is the body of POST /password/reset.
type resetRequest struct {
	Token       string `json:"token" required:"true" minLength:"1" maxLength:"200"`
	NewPassword string `json:"newPassword" required:"true" minLength:"8" maxLength:"128" description:"8 to 128 characters, not one of the 10,000 most common passwords"`
}

// Validate applies the password rules to the new password.
func (req *resetRequest) Validate() error {
	return passwordField("newPassword", req.NewPassword)
}

// forgotAnswer is the one body of POST /password/forgot.
var forgotAnswer = schemas.PasswordResetRequested{Accepted: true,
	Message: "if an account has this address, a link to reset its password was mailed; it works once within 30 minutes"}

// forgotPassword answers 202 before it looks the address up: the lookup,
// the link and the mail happen in the background, so neither the answer nor
// its timing tells whether an account has the address.
func (h *Handlers) forgotPassword(c *fiber.Ctx, req *forgotRequest) error {
	email := strings.Clone(strings.TrimSpace(req.Email))
	t := time.NewTimer(resetMailWait)
	defer t.Stop()
	select {
	case h.mailSlots <- struct{}{}:
	case <-t.C:
		// Too many at once: the same answer as busy hashing, for everyone.
		c.Set(fiber.HeaderRetryAfter, "1")
		return apierr.RateLimited()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), resetMailLimit)
	go func() {
		defer func() { <-h.mailSlots }()
		defer cancel()
		if err := h.mailReset(ctx, email); err != nil {
			h.cfg.Log.Warn("password reset mail", "err", err)
		}
	}()
	return c.Status(http.StatusAccepted).JSON(forgotAnswer)
}

// mailReset mails a reset link to the account of email, if there is one.
func (h *Handlers) mailReset(ctx context.Context, email string) error {
	u, err := h.users.ByEmail(ctx, email)
	if errors.Is(err, postgres.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := h.now().UTC()
	err = h.users.CreatePasswordResetCapped(ctx, hashToken(token), u.ID, now.Add(resetTTL), now, identity.ResetMailsPerDay)
	if errors.Is(err, identity.ErrResetCap) {
		// The answer was the same already; the inbox gets nothing more.
		h.cfg.Log.Info("password reset mail cap reached", "user", u.ID)
		return nil
	}
	if err != nil {
		return err
	}
	link := h.cfg.BaseURL + ResetPagePath + "?token=" + url.QueryEscape(token)
	return h.mailer.Send(ctx, mail.Message{
		To:      u.Email,
		Subject: "Reset your password",
		Body: "Someone asked to reset the password of your account. To choose a new password, open this link within 30 minutes:\n\n" +
			link + "\n\nIf it was not you, ignore this message: your password stays as it is.\n",
	})
}

// resetPassword spends the token, sets the new password and ends every
// session of the account in one transaction.
func (h *Handlers) resetPassword(c *fiber.Ctx, req *resetRequest) error {
	hash, err := h.pw.Hash(c.UserContext(), req.NewPassword)
	if err != nil {
		return hashError(c, err)
	}
	_, ended, err := h.users.ResetPassword(c.UserContext(), hashToken(req.Token), hash, h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.New(http.StatusBadRequest, schemas.CodeVerificationInvalid, "this reset link is unknown, used or expired: ask for a new one")
	}
	if err != nil {
		return err
	}
	h.ended(ended...)
	return c.SendStatus(http.StatusNoContent)
}
