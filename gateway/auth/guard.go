package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// Directory reads, at request time, what admin rights depend on.
type Directory interface {
	Account(ctx context.Context, userID string) (identity.Account, error)
}

var _ Directory = (*identity.Users)(nil)

// Guard decides admin rights from the database at request time, never from
// a token claim: an allow-listed e-mail confers the role only on an account
// an operator made or confirmed on the server (`platform admin create` or
// `admin verify`; never through the web verification link, since anyone
// can register an address before its owner), a confirmed admin's existing
// token gains the role, and removing an address from the list takes effect
// at once.
type Guard struct {
	dir    Directory
	admins Admins
	// adminMFA, when set (production), makes admin routes answer only an
	// admin who enrolled in two-factor (RequireAdminMFA).
	adminMFA bool
}

// NewGuard builds the guard over the configured allowlists.
func NewGuard(dir Directory, admins Admins) (*Guard, error) {
	if dir == nil {
		return nil, errors.New("auth guard: nil directory")
	}
	return &Guard{dir: dir, admins: admins}, nil
}

// Admins returns the configured allowlists.
func (g *Guard) Admins() Admins { return g.admins }

// Is reports whether the user is an admin of list: a confirmed account
// whose verified e-mail is on it.
func (g *Guard) Is(ctx context.Context, userID string, list Allowlist) (bool, error) {
	a, err := g.dir.Account(ctx, userID)
	if err != nil {
		if errors.Is(err, postgres.ErrNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("admin check: %w", err)
	}
	return a.RoleConfirmed && list.Has(a.Email), nil
}

// Role is "admin" for a confirmed account whose verified e-mail is on any
// allowlist, else "user".
func (g *Guard) Role(ctx context.Context, userID string) (string, error) {
	a, err := g.dir.Account(ctx, userID)
	if err != nil {
		return "", fmt.Errorf("role of %s: %w", userID, err)
	}
	if a.RoleConfirmed && g.admins.Role(a.Email) == "admin" {
		return "admin", nil
	}
	return "user", nil
}

// Require is middleware, after Authenticator.Require, that admits only admins of
// list and answers 403 forbidden to the others, and 403 mfa_required to an
// admin without two-factor when RequireAdminMFA is on.
func (g *Guard) Require(list Allowlist) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := User(c)
		if !ok {
			return apierr.AuthRequired()
		}
		if p.KeyID != "" {
			// Admin rights are never delegated to a key, whatever its
			// scopes (the route table closes admin routes too).
			return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "API keys cannot call admin routes; use a login token")
		}
		a, err := g.dir.Account(c.UserContext(), p.UserID)
		if errors.Is(err, postgres.ErrNotFound) {
			return apierr.Forbidden()
		}
		if err != nil {
			return fmt.Errorf("admin check: %w", err)
		}
		if !a.RoleConfirmed || !list.Has(a.Email) {
			return apierr.Forbidden()
		}
		if g.adminMFA && !a.MFA {
			return MFARequired()
		}
		return c.Next()
	}
}

// RequireVerified is bearer-token middleware for routes that serve data kept
// for an e-mail address (partner earnings and the like): it admits only an
// account that verified its address, and the caller's e-mail it stores is
// the one in the database, never a claim.
func (g *Guard) RequireVerified(a *Authenticator) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := a.Caller(c)
		if err != nil {
			return err
		}
		a, err := g.dir.Account(c.UserContext(), p.UserID)
		if errors.Is(err, postgres.ErrNotFound) {
			return apierr.AuthRequired()
		}
		if err != nil {
			return fmt.Errorf("verified-email check: %w", err)
		}
		if !a.Verified {
			return apierr.New(http.StatusForbidden, schemas.CodeEmailUnverified,
				"verify your e-mail address first (POST /api/auth/verify-email): records kept for an address are shown only to its verified owner")
		}
		p.Email = a.Email
		SetUser(c, p)
		return c.Next()
	}
}

// RequireAdminMFA makes admin routes (Require) answer an admin only once
// their account enrolled in TOTP two-factor; production turns it on. Call it
// at wiring, before the server serves.
func (g *Guard) RequireAdminMFA(on bool) { g.adminMFA = on }

// MFARequired is an admin without two-factor on an admin route.
func MFARequired() *apierr.Error {
	return apierr.New(http.StatusForbidden, schemas.CodeMFARequired,
		"admin routes need two-factor: enrol with POST /api/auth/mfa/totp and confirm with POST /api/auth/mfa/totp/confirm")
}

// AllEvents reports whether a webhook subscription the caller makes now may
// receive every event (not only the caller's): only from a login session,
// never an API key, of a confirmed admin of list, and under RequireAdminMFA
// only of one with two-factor on. The dispatcher re-checks the owner at
// every batch; this decides what the subscription was made with.
func (g *Guard) AllEvents(ctx context.Context, p Principal, list Allowlist) (bool, error) {
	if p.KeyID != "" {
		return false, nil
	}
	a, err := g.dir.Account(ctx, p.UserID)
	if errors.Is(err, postgres.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("all-events check: %w", err)
	}
	return a.RoleConfirmed && list.Has(a.Email) && (!g.adminMFA || a.MFA), nil
}
