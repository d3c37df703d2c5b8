package auth

import (
	"context"
	"testing"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// accounts is a Directory of fixed accounts.
type accounts map[string]identity.Account

func (a accounts) Account(_ context.Context, id string) (identity.Account, error) {
	acc, ok := a[id]
	if !ok {
		return identity.Account{}, postgres.ErrNotFound
	}
	return acc, nil
}

// TestAllEvents: only a confirmed admin's login session makes a webhook
// subscription that receives every event; never an API key, never an
// unconfirmed or unlisted account, and under RequireAdminMFA only an admin
// with two-factor on.
func TestAllEvents(t *testing.T) {
	t.Parallel()
	dir := accounts{
		"admin":     {Email: "root@example.com", Verified: true, RoleConfirmed: true},
		"admin-mfa": {Email: "root2@example.com", Verified: true, RoleConfirmed: true, MFA: true},
		"squatter":  {Email: "root3@example.com", Verified: true},
		"user":      {Email: "user@example.com", Verified: true, RoleConfirmed: true},
	}
	list := ParseAllowlist("root@example.com, root2@example.com, root3@example.com")
	g, err := NewGuard(dir, Admins{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		mfa  bool
		p    Principal
		want bool
	}{
		{"admin session, development", false, Principal{UserID: "admin", SessionID: "s"}, true},
		{"admin API key", false, Principal{UserID: "admin", KeyID: "k"}, false},
		{"admin without two-factor, production", true, Principal{UserID: "admin", SessionID: "s"}, false},
		{"admin with two-factor, production", true, Principal{UserID: "admin-mfa", SessionID: "s"}, true},
		{"admin with two-factor, API key, production", true, Principal{UserID: "admin-mfa", KeyID: "k"}, false},
		{"allow-listed but not confirmed", false, Principal{UserID: "squatter", SessionID: "s"}, false},
		{"not on the list", false, Principal{UserID: "user", SessionID: "s"}, false},
		{"unknown account", false, Principal{UserID: "nobody", SessionID: "s"}, false},
	}
	for _, tt := range tests {
		g.RequireAdminMFA(tt.mfa)
		got, err := g.AllEvents(context.Background(), tt.p, list)
		if err != nil || got != tt.want {
			t.Errorf("%s: %v %v, want %v", tt.name, got, err, tt.want)
		}
	}
}
