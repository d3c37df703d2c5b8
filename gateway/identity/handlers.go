// Package identity serves registration, login and the caller's profile
// under /api/auth.
package identity

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
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
}

// Validate reports every problem of the options.
func (c Config) Validate() error {
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, errors.New("identity: BaseURL is required (PUBLIC_BASE_URL)"))
	}
	return errors.Join(errs...)
}

// Handlers serve /api/auth.
type Handlers struct {
	users  UserStore
	tokens *auth.Tokens
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
}

// NewHandlers builds the handlers. db is pinged by /health; routes lists the
// server's routes for /openapi.json.
func NewHandlers(users UserStore, tokens *auth.Tokens, roles Roles, mailer Mailer, db platform.Pinger,
	now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if users == nil || tokens == nil || roles == nil || mailer == nil || db == nil || now == nil || routes == nil {
		return nil, errors.New("identity handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Passwords == nil {
		cfg.Passwords = NewPasswords(0, 0)
	}
	dummy, err := argon2id.CreateHash("not-a-real-password", hashParams)
	if err != nil {
		return nil, err
	}
	return &Handlers{users: users, tokens: tokens, roles: roles, mailer: mailer, db: db, now: now, routes: routes,
		cfg: cfg, pw: cfg.Passwords, dummyHash: dummy}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	require := h.tokens.Require()
	platform.Basics(g, "identity", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title:       "Identity",
		Description: "Registration, login, the caller's profile and e-mail verification. Tokens are HS256 JWTs sent as `Authorization: Bearer <token>`.",
		Prefixes:    []string{Prefix},
	}))
	server.Post(g, "/register", server.Op[registerRequest]{
		Summary:     "Create an account and get a token",
		Description: "Registers a user with e-mail and password and answers a bearer token. Creates the account (the password is stored as a hash).",
		Class:       ratelimit.Auth, Public: true, Handle: h.register,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the new account and its token", schemas.AuthToken{}),
			server.Fails(http.StatusConflict, "email_taken: an account with this e-mail exists"),
		},
	})
	server.Post(g, "/login", server.Op[loginRequest]{
		Summary:     "Exchange e-mail and password for a token",
		Description: "Checks the e-mail and password and answers a bearer token. Changes nothing.",
		Class:       ratelimit.Auth, Public: true, Handle: h.login,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "a token", schemas.AuthToken{}),
			server.Fails(http.StatusUnauthorized, "invalid_credentials: wrong e-mail or password"),
		},
	})
	server.Get(g, "/me", server.Op[server.NoRequest]{
		Summary:     "The caller's profile and role",
		Description: "The caller's e-mail, role and whether the e-mail is verified. Read-only.",
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
		Summary:     "Confirm an e-mail address with the one-time link's token",
		Description: "Marks the e-mail address of the link's user verified and spends the token.",
		Caller:      "anyone holding the one-time token; no bearer token",
		Public:      true, Handle: h.confirmVerification,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the address is verified", schemas.EmailVerified{}),
			server.Fails(http.StatusNotFound, "verification_invalid: the link is unknown, used or expired"),
		},
	})
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

// respondToken answers a token for u with status.
func (h *Handlers) respondToken(c *fiber.Ctx, status int, u identity.User) error {
	tok, err := h.tokens.Issue(u.ID, u.Email)
	if err != nil {
		return err
	}
	return c.Status(status).JSON(schemas.AuthToken{Token: tok, User: schemas.AuthUser{ID: u.ID, Email: u.Email}})
}
