package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	secret := []byte(strings.Repeat("k", 32))
	tokens, err := NewTokens(secret, time.Hour, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	good, err := tokens.Issue("u1", "a@b.co")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewTokens([]byte(strings.Repeat("x", 32)), time.Hour, func() time.Time { return now })
	forged, _ := other.Issue("u1", "a@b.co")
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "u1", "iss": issuer, "exp": now.Add(time.Hour).Unix()})
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	noExp := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u1", "iss": issuer})
	noExpTok, _ := noExp.SignedString(secret)

	tests := []struct {
		name  string
		token string
		after time.Duration
		ok    bool
	}{
		{"valid", good, 0, true},
		{"valid just before expiry", good, 59 * time.Minute, true},
		{"expired", good, 61 * time.Minute, false},
		{"forged with another key", forged, 0, false},
		{"alg none", noneTok, 0, false},
		{"no expiry", noExpTok, 0, false},
		{"garbage", "a.b.c", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check, _ := NewTokens(secret, time.Hour, func() time.Time { return now.Add(tt.after) })
			p, err := check.Verify(tt.token)
			if (err == nil) != tt.ok {
				t.Fatalf("verify: err=%v, want ok=%v", err, tt.ok)
			}
			if tt.ok && (p.UserID != "u1" || p.Email != "a@b.co") {
				t.Fatalf("principal = %+v", p)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header string
		ok     bool
	}{
		{"Bearer abc", true},
		{"Bearer  abc", false},
		{"bearer abc", false},
		{"Bearer", false},
		{"Bearer ", false},
		{"Basic abc", false},
		{"Bearer abc def", false},
	}
	for _, tt := range tests {
		if _, ok := BearerToken(tt.header); ok != tt.ok {
			t.Errorf("%q: ok=%v", tt.header, ok)
		}
	}
}

func TestRole(t *testing.T) {
	t.Parallel()
	a := Admins{Fiat: ParseAllowlist(" Ops@Example.com, x@y.z"), Gov: ParseAllowlist("")}
	if a.Role("ops@example.COM") != "admin" || a.Role("someone@example.com") != "user" {
		t.Fatal("roles wrong")
	}
}
