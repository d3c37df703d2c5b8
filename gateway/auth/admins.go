package auth

import (
	"strings"
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

// Role is "admin" for an e-mail on any allowlist, else "user". It says
// nothing about whether the address is verified: Guard.Role decides rights.
func (a Admins) Role(email string) string {
	if a.Fiat.Has(email) || a.Gov.Has(email) || a.Charity.Has(email) || a.Reputation.Has(email) {
		return "admin"
	}
	return "user"
}
