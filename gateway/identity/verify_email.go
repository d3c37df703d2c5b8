package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// verificationTTL is how long a verification link works.
const verificationTTL = 24 * time.Hour

// MaxVerificationMails is how many verification links one address is sent
// in 24 hours, whoever asks (a mail bomb through the platform's sender
// otherwise); one more is 429 rate_limited with Retry-After.
const MaxVerificationMails = 5

// hashToken is how a verification token is stored: never in plaintext.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// sendVerification mails a one-time link to the caller's current address.
func (h *Handlers) sendVerification(c *fiber.Ctx, _ *server.NoRequest) error {
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
	retryAt, err := h.users.CreateVerificationCapped(c.UserContext(), hashToken(token), u.ID, u.Email, expires, now,
		MaxVerificationMails)
	if errors.Is(err, store.ErrVerificationCap) {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(int(retryAt.Sub(now).Seconds())+1, 1)))
		return apierr.RateLimited().With(map[string]any{"resetAt": retryAt.UTC().Format(time.RFC3339)})
	}
	if err != nil {
		return err
	}
	link := h.cfg.BaseURL + "/api/auth/verify-email?token=" + url.QueryEscape(token)
	err = h.mailer.Send(c.UserContext(), mail.Message{
		To:      u.Email,
		Subject: "Confirm your e-mail address",
		Body: "Open this link to confirm that " + u.Email + " is yours:\n\n" + link +
			"\n\nThe link works once and expires in 24 hours. If you did not ask for it, ignore this message.\n",
	})
	if err != nil {
		return apierr.New(http.StatusBadGateway, schemas.CodeMailUnavailable, "the verification e-mail could not be sent; try again later")
	}
	return c.JSON(schemas.VerificationSent{Sent: true, Email: u.Email, ExpiresAt: expires.Format(time.RFC3339)})
}

// confirmRequest is the query of GET /verify-email.
type confirmRequest struct {
	Token string `query:"token" json:"-" required:"true" minLength:"1" description:"the token of the one-time link"`
}

// Validate checks that the token is given.
func (req *confirmRequest) Validate() error {
	if req.Token == "" {
		return apierr.Validation(map[string]string{"token": "is required"})
	}
	return nil
}

// confirmVerification uses a link's token once.
func (h *Handlers) confirmVerification(c *fiber.Ctx, req *confirmRequest) error {
	email, err := h.users.ConfirmVerification(c.UserContext(), hashToken(req.Token), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.New(http.StatusNotFound, schemas.CodeVerificationInvalid, "this link is unknown, used or expired")
	}
	if err != nil {
		return err
	}
	return c.JSON(schemas.EmailVerified{Verified: true, Email: email})
}
