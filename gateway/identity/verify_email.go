package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// verificationTTL is how long a verification link works.
const verificationTTL = 24 * time.Hour

// hashToken is how a verification token is stored: never in plaintext.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// sendVerification mails a one-time link to the caller's current address.
func (h *Handlers) sendVerification(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	u, err := h.users.ByID(c.UserContext(), p.UserID)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.AuthRequired()
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
	expires := now.Add(verificationTTL)
	if err := h.users.CreateVerification(c.UserContext(), hashToken(token), u.ID, u.Email, expires, now); err != nil {
		return err
	}
	link := h.baseURL + "/api/auth/verify-email?token=" + url.QueryEscape(token)
	err = h.mailer.Send(c.UserContext(), mail.Message{
		To:      u.Email,
		Subject: "Confirm your e-mail address",
		Body: "Open this link to confirm that " + u.Email + " is yours:\n\n" + link +
			"\n\nThe link works once and expires in 24 hours. If you did not ask for it, ignore this message.\n",
	})
	if err != nil {
		return apierr.New(http.StatusBadGateway, schemas.CodeMailUnavailable, "the verification e-mail could not be sent; try again later")
	}
	return c.JSON(fiber.Map{"sent": true, "email": u.Email, "expiresAt": expires.Format(time.RFC3339)})
}

// confirmVerification uses a link's token once.
func (h *Handlers) confirmVerification(c *fiber.Ctx) error {
	token := c.Query("token")
	if token == "" {
		return apierr.Validation(map[string]string{"token": "is required"})
	}
	email, err := h.users.ConfirmVerification(c.UserContext(), hashToken(token), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.New(http.StatusNotFound, schemas.CodeVerificationInvalid, "this link is unknown, used or expired")
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"verified": true, "email": email})
}
