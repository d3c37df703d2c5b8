package webhooks

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// TicketTTL is how long a stream ticket works: long enough to open the
// stream right after minting it, short enough that a leaked URL is useless.
const TicketTTL = time.Minute

// hashTicket is how a ticket is stored: never in plaintext.
func hashTicket(ticket string) string {
	sum := sha256.Sum256([]byte(ticket))
	return hex.EncodeToString(sum[:])
}

// mintTicket answers a fresh single-use ticket for the calling fiat admin.
func (h *Handlers) mintTicket(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	ticket := base64.RawURLEncoding.EncodeToString(raw)
	now := h.now().UTC()
	expires := now.Add(TicketTTL)
	if err := h.store.CreateStreamTicket(c.UserContext(), hashTicket(ticket), p.UserID, p.SessionID, expires, now); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(schemas.StreamTicket{Ticket: ticket, ExpiresAt: expires.Format(time.RFC3339)})
}

// streamAuth authenticates GET /admin/events, before the admin check: a
// `?ticket=` is redeemed once and stands for the admin who minted it;
// otherwise the Authorization header is required (user). A bearer token in
// the URL (`?access_token=`) is refused, whatever else the request carries:
// URLs end up in proxy and access logs.
func (h *Handlers) streamAuth(user fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if c.Query("access_token") != "" {
			return apierr.New(http.StatusUnauthorized, apierr.CodeAuthRequired,
				"a bearer token is never accepted in a URL: send the Authorization header, or mint a single-use ticket "+
					"(POST /api/fiat/admin/events/ticket) and pass ?ticket=")
		}
		ticket := c.Query("ticket")
		if ticket == "" {
			return user(c)
		}
		userID, sessionID, err := h.store.UseStreamTicket(c.UserContext(), hashTicket(ticket), h.now().UTC())
		if errors.Is(err, postgres.ErrNotFound) {
			return apierr.New(http.StatusUnauthorized, apierr.CodeAuthRequired,
				"the stream ticket is unknown, used or expired: mint a new one")
		}
		if err != nil {
			return err
		}
		p := auth.Principal{UserID: userID, SessionID: sessionID}
		// The ticket stands for the session that minted it: once that
		// session ended, the ticket opens nothing.
		if err := h.authn.Sessions().Check(c.UserContext(), p); errors.Is(err, auth.ErrSessionEnded) {
			return apierr.AuthRequired()
		} else if err != nil {
			return err
		}
		auth.SetUser(c, p)
		return c.Next()
	}
}
