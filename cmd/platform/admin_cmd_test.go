package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fintech/platform/gateway/auth"
)

// TestRolesFor: `admin create` grants only roles whose allowlist names the
// address (every such role when none is asked for), and refuses the rest.
func TestRolesFor(t *testing.T) {
	t.Parallel()
	admins := auth.Admins{Fiat: auth.ParseAllowlist("a@x.io,b@x.io"), Gov: auth.ParseAllowlist("A@x.io"),
		Charity: auth.ParseAllowlist(""), Reputation: auth.ParseAllowlist("")}
	tests := []struct {
		email, roles string
		want         string // granted roles, or the start of the error
	}{
		{"a@x.io", "", "[fiat gov]"},
		{"a@x.io", "gov", "[gov]"},
		{"A@X.IO", " Fiat , gov ", "[fiat gov]"},
		{"b@x.io", "gov", "error: admin create: b@x.io is not on GOV_ADMIN_EMAILS"},
		{"c@x.io", "", "error: admin create: c@x.io is on no *_ADMIN_EMAILS allowlist"},
		{"a@x.io", "root,fiat", "error: admin create: unknown role(s) root"},
	}
	for _, tt := range tests {
		got, err := rolesFor(admins, tt.email, tt.roles)
		out := fmt.Sprint(got)
		if err != nil {
			out = "error: " + err.Error()
		}
		if !strings.HasPrefix(out, tt.want) {
			t.Errorf("rolesFor(%q, %q) = %s, want %s", tt.email, tt.roles, out, tt.want)
		}
	}
}
