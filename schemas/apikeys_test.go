package schemas

import (
	"slices"
	"testing"
)

// TestKeyScopes: every area has a read and a write scope, a route's scope
// follows its method, and nothing else is a scope or an area.
func TestKeyScopes(t *testing.T) {
	t.Parallel()
	scopes := KeyScopes()
	if len(scopes) != 2*len(KeyAreas) || !slices.IsSorted(scopes) {
		t.Fatalf("KeyScopes() = %v", scopes)
	}
	for _, s := range scopes {
		if !IsKeyScope(s) {
			t.Errorf("IsKeyScope(%q) is false", s)
		}
	}
	for _, tt := range []struct{ area, method, scope string }{
		{"fiat", "GET", "fiat:read"}, {"fiat", "HEAD", "fiat:read"}, {"fiat", "POST", "fiat:write"},
		{"webhooks", "PATCH", "webhooks:write"}, {"webhooks", "DELETE", "webhooks:write"},
	} {
		if got := KeyScopeIn(tt.area, tt.method); got != tt.scope || !IsKeyScope(got) {
			t.Errorf("KeyScopeIn(%s, %s) = %q, want %q", tt.area, tt.method, got, tt.scope)
		}
	}
	for _, bad := range []string{"fiat", "fiat:admin", ":read", "nope:read", "fiat:read:x", ""} {
		if IsKeyScope(bad) {
			t.Errorf("IsKeyScope(%q)", bad)
		}
	}
	for _, bad := range []string{"", "none", "nope", "fiat:read"} {
		if IsKeyArea(bad) {
			t.Errorf("IsKeyArea(%q)", bad)
		}
	}
}
