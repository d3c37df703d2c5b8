package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/htmlpage"
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

// confirmBody is the body of POST /verify-email/confirm.
type confirmBody struct {
	Token string `json:"token" required:"true" minLength:"1" maxLength:"200" description:"the token of the one-time link (its token query parameter)"`
}

// Validate checks that the token is given.
func (req *confirmBody) Validate() error {
	if req.Token == "" || len(req.Token) > 200 {
		return apierr.Validation(map[string]string{"token": "is required, at most 200 characters"})
	}
	return nil
}

// confirmPage is the page the mailed link opens: a GET changes nothing (a
// mail scanner or a link preview that fetches it confirms nothing); its
// button POSTs the token from the page's own script, under the page's CSP.
var confirmPage = template.Must(template.New("verify-email").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Confirm your e-mail address</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="{{.Nonce}}">body{font-family:system-ui,sans-serif;max-width:30rem;margin:4rem auto;padding:0 1rem}
.card{border:1px solid #ccc;border-radius:8px;padding:1.5rem}button{font-size:1.1rem;padding:.6rem 1.4rem}
.ok{color:#16803c;font-weight:600}.bad{color:#b42318;font-weight:600}</style>
</head><body><div class="card">
<h1>Confirm your e-mail address</h1>
<p>Press the button to confirm that this address is yours. If you did not ask for this, close the page.</p>
<button id="confirm" type="button">Confirm my address</button>
<p id="result" hidden></p>
</div>
<script nonce="{{.Nonce}}">
document.getElementById("confirm").addEventListener("click", async (ev) => {
  ev.target.disabled = true;
  const out = document.getElementById("result");
  const token = new URLSearchParams(location.search).get("token") || "";
  try {
    const r = await fetch("{{.ConfirmPath}}", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }) });
    const body = await r.json();
    out.className = r.ok ? "ok" : "bad";
    out.textContent = r.ok ? body.email + " is verified." : (body.message || "This link cannot be used.");
  } catch (e) {
    out.className = "bad";
    out.textContent = "The confirmation did not reach the server; try again.";
    ev.target.disabled = false;
  }
  out.hidden = false;
});
</script></body></html>`))

// showConfirmation serves the mailed link: a page whose button confirms.
func (h *Handlers) showConfirmation(c *fiber.Ctx, _ *confirmRequest) error {
	return htmlpage.Render(c, http.StatusOK, confirmPage, htmlpage.Policy{Connect: true}, func(nonce string) any {
		return struct{ Nonce, ConfirmPath string }{nonce, "/api/auth/verify-email/confirm"}
	})
}

// confirmVerification uses a link's token once. It marks the address
// verified; it never confers an allow-listed role (that takes the
// operator, `platform admin create` or `admin verify`).
func (h *Handlers) confirmVerification(c *fiber.Ctx, req *confirmBody) error {
	email, err := h.users.ConfirmVerification(c.UserContext(), hashToken(req.Token), h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.New(http.StatusNotFound, schemas.CodeVerificationInvalid, "this link is unknown, used or expired")
	}
	if err != nil {
		return err
	}
	return c.JSON(schemas.EmailVerified{Verified: true, Email: email})
}
