// Package identity serves registration, login and the caller's profile
// under /api/auth.
package identity

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/mail"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// UserStore is what the handlers need from the account repository.
type UserStore interface {
	Create(ctx context.Context, u identity.User, event pipeline.OutboxRow) error
	ByEmail(ctx context.Context, email string) (identity.User, error)
	ByID(ctx context.Context, id string) (identity.User, error)
	CreateVerification(ctx context.Context, tokenHash, userID, email string, expiresAt, now time.Time) error
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

// hashParams follow OWASP's argon2id minimum (19 MiB, 2 passes): strong,
// and cheap enough that registrations do not starve a 2-core box.
var hashParams = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Handlers serve /api/auth.
type Handlers struct {
	users   UserStore
	tokens  *auth.Tokens
	roles   Roles
	mailer  Mailer
	baseURL string
	now     func() time.Time
	// dummyHash is verified against for unknown e-mails so that login takes
	// the same time whether or not the account exists.
	dummyHash string
}

// NewHandlers builds the handlers. baseURL (PUBLIC_BASE_URL) prefixes the
// verification links the mailer sends.
func NewHandlers(users UserStore, tokens *auth.Tokens, roles Roles, mailer Mailer, baseURL string,
	now func() time.Time) (*Handlers, error) {
	if users == nil || tokens == nil || roles == nil || mailer == nil || now == nil {
		return nil, errors.New("identity handlers: nil dependency")
	}
	dummy, err := argon2id.CreateHash("not-a-real-password", hashParams)
	if err != nil {
		return nil, err
	}
	return &Handlers{users: users, tokens: tokens, roles: roles, mailer: mailer, baseURL: baseURL, now: now,
		dummyHash: dummy}, nil
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group("/api/auth")
	g.Post("/register", ratelimit.Auth, "Create an account and get a token", h.register)
	g.Post("/login", ratelimit.Auth, "Exchange e-mail and password for a token", h.login)
	g.Get("/me", "The caller's profile and role", h.tokens.Require(), h.me)
	g.Post("/verify-email", ratelimit.Auth, "Send a one-time link that proves the caller owns their e-mail address",
		h.tokens.Require(), h.sendVerification)
	g.Get("/verify-email", "Confirm an e-mail address with the one-time link's token", h.confirmVerification)
}

type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
}

type userRef struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

type tokenResponse struct {
	Token string  `json:"token"`
	User  userRef `json:"user"`
}

func (h *Handlers) register(c *fiber.Ctx) error {
	var req credentials
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	req.Email = strings.TrimSpace(req.Email)
	var v bind.Validator
	v.Email("email", req.Email)
	n := len([]rune(req.Password))
	v.Check(n >= minPassword && n <= maxPassword, "password", "must be 8 to 128 characters")
	v.MaxLen("name", req.Name, bind.MaxTitle)
	if err := v.Err(); err != nil {
		return err
	}
	hash, err := argon2id.CreateHash(req.Password, hashParams)
	if err != nil {
		return err
	}
	now := h.now().UTC()
	u := identity.User{ID: schemas.NewID(), Email: req.Email, Name: strings.TrimSpace(req.Name), PasswordHash: hash, CreatedAt: now}
	env, err := schemas.New(schemas.TypeUserRegistered, u.ID, u.ID,
		schemas.UserRegistered{UserID: u.ID, Email: u.Email, Name: u.Name}, now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsIdentity, env)
	if err != nil {
		return err
	}
	if err := h.users.Create(c.UserContext(), u, row); err != nil {
		if errors.Is(err, postgres.ErrConflict) {
			return apierr.New(http.StatusConflict, schemas.CodeEmailTaken, "an account with this e-mail exists")
		}
		return err
	}
	return h.respondToken(c, http.StatusCreated, u)
}

func (h *Handlers) login(c *fiber.Ctx) error {
	var req credentials
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	v.Required("email", req.Email)
	v.Required("password", req.Password)
	v.Check(len([]rune(req.Password)) <= maxPassword, "password", "must be at most 128 characters")
	if err := v.Err(); err != nil {
		return err
	}
	invalid := apierr.New(http.StatusUnauthorized, schemas.CodeInvalidCredentials, "wrong e-mail or password")
	u, err := h.users.ByEmail(c.UserContext(), strings.TrimSpace(req.Email))
	if errors.Is(err, postgres.ErrNotFound) {
		_, _ = argon2id.ComparePasswordAndHash(req.Password, h.dummyHash)
		return invalid
	}
	if err != nil {
		return err
	}
	ok, err := argon2id.ComparePasswordAndHash(req.Password, u.PasswordHash)
	if err != nil {
		return err
	}
	if !ok {
		return invalid
	}
	return h.respondToken(c, http.StatusOK, u)
}

func (h *Handlers) respondToken(c *fiber.Ctx, status int, u identity.User) error {
	tok, err := h.tokens.Issue(u.ID, u.Email)
	if err != nil {
		return err
	}
	return c.Status(status).JSON(tokenResponse{Token: tok, User: userRef{ID: u.ID, Email: u.Email}})
}

type meResponse struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
}

func (h *Handlers) me(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	u, err := h.users.ByID(c.UserContext(), p.UserID)
	if errors.Is(err, postgres.ErrNotFound) {
		// A valid token of a deleted account authenticates nobody.
		return apierr.AuthRequired()
	}
	if err != nil {
		return err
	}
	role, err := h.roles.Role(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	return c.JSON(meResponse{ID: u.ID, Email: u.Email, Name: u.Name, Role: role})
}
