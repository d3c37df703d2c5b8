package auth

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
)

// Allowlist is a set of lower-cased e-mail addresses.
type Allowlist map[string]bool

// ParseAllowlist reads a comma-separated list of e-mails.
func ParseAllowlist(s string) Allowlist {
	l := Allowlist{}
	for _, e := range strings.Split(s, ",") {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
			l[e] = true
		}
	}
	return l
}

// Has reports whether email is on the list (case-insensitively).
func (l Allowlist) Has(email string) bool { return l[strings.ToLower(email)] }

// Admins are the per-module admin allowlists of architecture.md.
type Admins struct {
	Fiat, Gov, Charity, Reputation Allowlist
}

// Role is "admin" for an e-mail on any allowlist, else "user".
func (a Admins) Role(email string) string {
	if a.Fiat.Has(email) || a.Gov.Has(email) || a.Charity.Has(email) || a.Reputation.Has(email) {
		return "admin"
	}
	return "user"
}

// Require is middleware, after Tokens.Require, that admits only callers on
// list and answers 403 forbidden to the others.
func Require(list Allowlist) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := User(c)
		if !ok {
			return apierr.AuthRequired()
		}
		if !list.Has(p.Email) {
			return apierr.Forbidden()
		}
		return c.Next()
	}
}
