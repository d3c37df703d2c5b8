package auth

import "testing"

// TestHasScope: a key's scopes grant exactly what they name, and a write
// scope grants the read of its own area, never another area's or a write.
func TestHasScope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scopes []string
		need   string
		ok     bool
	}{
		{[]string{"fiat:read"}, "fiat:read", true},
		{[]string{"fiat:read"}, "fiat:write", false},
		{[]string{"fiat:write"}, "fiat:read", true},
		{[]string{"fiat:write"}, "webhooks:read", false},
		{[]string{"webhooks:write"}, "fiat:write", false},
		{nil, "fiat:read", false},
		{[]string{"fiat:read"}, "", false},
	}
	for _, tt := range tests {
		if got := HasScope(tt.scopes, tt.need); got != tt.ok {
			t.Errorf("HasScope(%v, %q) = %v", tt.scopes, tt.need, got)
		}
	}
	if !IsAPIKey("rk_live_abc") || IsAPIKey("eyJhbGciOiJIUzI1NiJ9.x.y") {
		t.Error("IsAPIKey tells keys from JWTs wrongly")
	}
}
