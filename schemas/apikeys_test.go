package schemas

import "testing"

// TestKeyScopeOf: the longest prefix wins, a prefix matches whole path
// segments only, nameless areas close their routes, and unlisted paths are
// reported unlisted.
func TestKeyScopeOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, path string
		scope        string
		listed       bool
	}{
		{"GET", "/api/fiat/wallets", "fiat:read", true},
		{"POST", "/api/fiat/transfer", "fiat:write", true},
		{"DELETE", "/api/fiat/webhook-subs/:id", "webhooks:write", true},
		{"GET", "/api/fiat/me/webhooks", "webhooks:read", true},
		{"GET", "/api/fiat/me/webhook/deliveries", "webhooks:read", true},
		{"GET", "/api/auth/me", "", true}, // /api/auth, closed: the route declares account:read
		{"POST", "/api/auth/api-keys", "", true},
		{"GET", "/api/platform/admin/dlq", "", true},
		{"GET", "/api-backend/api/planet/x", "constitution:read", true},
		{"GET", "/api/fiatx", "", false},
		{"GET", "/build/vacancies", "", false},
	}
	for _, tt := range tests {
		scope, listed := KeyScopeOf(tt.method, tt.path)
		if scope != tt.scope || listed != tt.listed {
			t.Errorf("%s %s: %q %v, want %q %v", tt.method, tt.path, scope, listed, tt.scope, tt.listed)
		}
		if scope != "" && !IsKeyScope(scope) {
			t.Errorf("%s is not in KeyScopes", scope)
		}
	}
	for _, bad := range []string{"fiat", "fiat:admin", ":read", "nope:read", "fiat:read:x"} {
		if IsKeyScope(bad) {
			t.Errorf("IsKeyScope(%q)", bad)
		}
	}
}
