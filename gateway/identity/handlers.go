// Package identity serves registration, login and the caller's profile
// under /api/auth.
package identity

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
)

// Prefix is where the identity routes are mounted.
const Prefix = "/api/auth"

// UserStore is what the handlers need from the account repository.
type UserStore interface {
	Create(ctx context.Context, u identity.User, event pipeline.OutboxRow) error
	ByEmail(ctx context.Context, email string) (identity.User, error)
	ByID(ctx context.Context, id string) (identity.User, error)
	CreateVerificationCapped(ctx context.Context, tokenHash, userID, email string, expiresAt, now time.Time, max int) (time.Time, error)
	ConfirmVerification(ctx context.Context, tokenHash string, now time.Time) (string, error)
	SessionStore
	PasswordStore
	MFAStore
}

// SessionStore keeps login sessions.
type SessionStore interface {
	CreateSession(ctx context.Context, s identity.Session) error
	Sessions(ctx context.Context, userID string, now time.Time) ([]identity.Session, error)
	EndSession(ctx context.Context, userID, id string, now time.Time) error
	EndOtherSessions(ctx context.Context, userID, keep string, now time.Time) ([]string, error)
}

// PasswordStore changes passwords and keeps reset links.
type PasswordStore interface {
	SetPassword(ctx context.Context, userID, hash, keep string, now time.Time) ([]string, error)
	CreatePasswordResetCapped(ctx context.Context, tokenHash, userID string, expiresAt, now time.Time, max int) error
	ResetPassword(ctx context.Context, tokenHash, hash string, now time.Time) (string, []string, error)
}

// MFAStore keeps TOTP enrolments and recovery codes.
type MFAStore interface {
	TOTP(ctx context.Context, userID string) (identity.TOTP, error)
	StartTOTP(ctx context.Context, userID, sealedSecret string, now time.Time) error
	ConfirmTOTP(ctx context.Context, userID string, step int64, codeHashes []string, now time.Time) error
	UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error)
	UseRecoveryCode(ctx context.Context, userID, codeHash string, now time.Time) (bool, error)
	DisableTOTP(ctx context.Context, userID string) error
	AttemptStore
}

// Sealer seals the TOTP secrets at rest (storage/sealed).
type Sealer interface {
	SealText(plaintext, aad string) (string, error)
	OpenText(stored, aad string) (string, error)
}

// Roles decides a user's role from the database at request time.
type Roles interface {
	Role(ctx context.Context, userID string) (string, error)
}

// Mailer sends the verification link.
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

var _ UserStore = (*identity.Users)(nil)

// Password length rules of decisions.md.
const (
	minPassword = 8
	maxPassword = 128
)

// Config holds the handlers' options.
type Config struct {
	// BaseURL (PUBLIC_BASE_URL) prefixes the verification links the mailer
	// sends, e.g. https://platform.example.
	BaseURL string
	// Passwords hashes and checks passwords under a concurrency bound;
	// nil builds one sized for this machine (NewPasswords(0, 0)).
	Passwords *Passwords
	// Vault seals TOTP secrets at rest (required).
	Vault Sealer
	// Log reports what a request no longer waits for (a reset mail that
	// failed); nil discards.
	Log *slog.Logger
	// Issuer names the platform in authenticator apps (default: the host
	// of BaseURL).
	Issuer string
}

// Validate reports every problem of the options.
func (c Config) Validate() error {
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, errors.New("identity: BaseURL is required (PUBLIC_BASE_URL)"))
	}
	if c.Vault == nil {
		errs = append(errs, errors.New("identity: Vault is required (DATA_ENCRYPTION_KEY)"))
	}
	return errors.Join(errs...)
}

// Handlers serve /api/auth.
type Handlers struct {
	users  UserStore
	authn  *auth.Authenticator
	roles  Roles
	mailer Mailer
	db     platform.Pinger
	now    func() time.Time
	routes func() []server.Route
	cfg    Config
	pw     *Passwords
	// dummyHash is verified against for unknown e-mails so that login takes
	// the same time whether or not the account exists.
	dummyHash string
	// mailSlots bounds the reset mails being prepared in the background.
	mailSlots chan struct{}
}

// NewHandlers builds the handlers. db is pinged by /health; routes lists the
// server's routes for /openapi.json.
func NewHandlers(users UserStore, authn *auth.Authenticator, roles Roles, mailer Mailer, db platform.Pinger,
	now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if users == nil || authn == nil || roles == nil || mailer == nil || db == nil || now == nil || routes == nil {
		return nil, errors.New("identity handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Passwords == nil {
		cfg.Passwords = NewPasswords(0, 0)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Issuer == "" {
		cfg.Issuer = strings.TrimPrefix(strings.TrimPrefix(cfg.BaseURL, "https://"), "http://")
	}
	dummy, err := argon2id.CreateHash("not-a-real-password", hashParams)
	if err != nil {
		return nil, err
	}
	return &Handlers{users: users, authn: authn, roles: roles, mailer: mailer, db: db, now: now, routes: routes,
		cfg: cfg, pw: cfg.Passwords, dummyHash: dummy, mailSlots: make(chan struct{}, resetMailSlots)}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	// Credentials are closed to keys; GET /me declares its own scope.
	g := r.Group(Prefix).KeyArea(server.NoKeys)
	require := h.authn.Require()
	platform.Basics(g, "identity", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title:       "Identity",
		Description: "Registration, login, the caller's profile and e-mail verification. Tokens are HS256 JWTs sent as `Authorization: Bearer <token>`.",
		Prefixes:    []string{Prefix, ResetPagePath},
	}))
	server.Post(g, "/register", server.Op[registerRequest]{
		Summary:     "Create an account and get a token",
		Description: "Registers a user with e-mail and password and answers a bearer token. Creates the account (the password is stored as a hash) and its first session. Password rules: " + PasswordRules + ".",
		Class:       ratelimit.Auth, Public: true, Handle: h.register,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the new account and its token", schemas.AuthToken{}),
			server.Fails(http.StatusConflict, "email_taken: an account with this e-mail exists"),
		},
	})
	server.Post(g, "/login", server.Op[loginRequest]{
		Summary:     "Exchange e-mail and password (and a second factor when on) for a token",
		Description: "Checks the e-mail and password and, for an account with TOTP two-factor, a current `code` or an unused `recoveryCode`, and answers a bearer token of a new session (GET /api/auth/sessions lists them). A TOTP code is accepted once: a replay within its window is refused. For an account with two-factor on the answer never tells whether the password was right: without a code it is mfa_required either way, and a wrong password and a wrong code are the same invalid_credentials. Wrong codes are limited per account: after 5 within 15 minutes, from any address, every attempt answers 429 with Retry-After, a right code included.",
		Class:       ratelimit.Auth, Public: true, Handle: h.login,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "a token", schemas.AuthToken{}),
			server.Fails(http.StatusUnauthorized, "invalid_credentials or mfa_required: wrong e-mail, password or second factor (invalid_credentials), or the account has two-factor on and neither code nor recoveryCode was given (mfa_required)"),
			server.Fails(http.StatusTooManyRequests, "rate_limited: 5 wrong second-factor codes for this account within 15 minutes; Retry-After says when to try again"),
		},
	})
	server.Get(g, "/me", server.Op[server.NoRequest]{
		Summary:     "The caller's profile and role",
		Description: "The caller's e-mail, role and whether two-factor is on. Read-only.",
		KeyScope:    "account:read",
		Handle:      h.me,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's profile and role", schemas.Profile{})},
	}, require)
	server.Post(g, "/verify-email", server.Op[server.NoRequest]{
		Summary:     "Send a one-time link that proves the caller owns their e-mail address",
		Description: "E-mails the caller a one-time verification link. Creates a verification token.",
		Class:       ratelimit.Auth,
		Handle:      h.sendVerification,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "a one-time link was mailed to the caller's address", schemas.VerificationSent{}),
			server.Fails(http.StatusBadGateway, "mail_unavailable: the e-mail could not be sent; try again later"),
		},
	}, require)
	server.Get(g, "/verify-email", server.Op[confirmRequest]{
		Summary:     "The page of the mailed one-time link: a button that confirms the address",
		Description: "Shows a page whose button confirms the address (POST /api/auth/verify-email/confirm). Read-only: opening the link, as mail scanners do, confirms nothing.",
		Public:      true, Handle: h.showConfirmation,
		Responses: []server.Response{
			{Status: http.StatusOK, Description: "the confirmation page", ContentType: fiber.MIMETextHTML},
		},
	})
	server.Post(g, "/verify-email/confirm", server.Op[confirmBody]{
		Summary: "Confirm an e-mail address with the one-time link's token",
		Description: "Marks the e-mail address of the link's user verified and spends the token. It never confers an allow-listed admin role: " +
			"that takes `platform admin create` or `platform admin verify` on the server.",
		Caller: "anyone holding the one-time token; no bearer token",
		Class:  ratelimit.Auth, Public: true, Handle: h.confirmVerification,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the address is verified", schemas.EmailVerified{}),
			server.Fails(http.StatusNotFound, "verification_invalid: the link is unknown, used or expired"),
		},
	})
	h.registerSessions(g, require)
	h.registerPasswords(r, g, require)
	h.registerMFA(g, require)
}

// hashError answers a password that found no hashing slot in time with 429
// rate_limited (the client retries after a second) and passes others on.
func hashError(c *fiber.Ctx, err error) error {
	if errors.Is(err, ErrHashBusy) {
		c.Set(fiber.HeaderRetryAfter, "1")
		return apierr.RateLimited()
	}
	return err
}

// respondToken starts a session for u (from this request's client address,
// behind a trusted proxy the one it forwarded, and user agent) and answers its token with status.
func (h *Handlers) respondToken(c *fiber.Ctx, status int, u identity.User) error {
	now := h.now().UTC()
	sid := schemas.NewID()
	tok, exp, err := h.authn.IssueSession(u.ID, u.Email, sid)
	if err != nil {
		return err
	}
	ua := c.Get(fiber.HeaderUserAgent)
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	if err := h.users.CreateSession(c.UserContext(), identity.Session{ID: sid, UserID: u.ID, CreatedAt: now,
		ExpiresAt: exp, IP: clientip.String(c), UserAgent: strings.ToValidUTF8(strings.Clone(ua), "")}); err != nil {
		return err
	}
	return c.Status(status).JSON(schemas.AuthToken{Token: tok, User: schemas.AuthUser{ID: u.ID, Email: u.Email}})
}

// maxUserAgent bounds the user agent a session keeps.
const maxUserAgent = 512
