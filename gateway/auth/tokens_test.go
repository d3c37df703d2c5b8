package auth

import (
	"crypto/sha256"
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

// TestVerifyCache: a cached token is still refused once it expires, a
// forged or tampered token is never answered from the cache, and an entry
// is re-checked after verifyCacheTTL.
func TestVerifyCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := now
	secret := []byte(strings.Repeat("k", 32))
	tokens, err := NewTokens(secret, 10*time.Minute, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	good, _ := tokens.Issue("u1", "a@b.co")
	if _, err := tokens.Verify(good); err != nil {
		t.Fatal(err)
	}
	if _, ok := tokens.verified[sha256.Sum256([]byte(good))]; !ok {
		t.Fatal("a verified token is not cached")
	}
	tampered := good[:len(good)-2] + "xx"
	if _, err := tokens.Verify(tampered); err == nil {
		t.Fatal("tampered token accepted")
	}
	if _, ok := tokens.verified[sha256.Sum256([]byte(tampered))]; ok {
		t.Fatal("a refused token was cached")
	}
	clock = now.Add(verifyCacheTTL + time.Second) // re-checked, still valid
	if p, err := tokens.Verify(good); err != nil || p.UserID != "u1" {
		t.Fatalf("after the cache TTL: %+v %v", p, err)
	}
	clock = now.Add(10 * time.Minute) // the token's exp: refused though cached
	if _, err := tokens.Verify(good); err == nil {
		t.Fatal("expired token answered from the cache")
	}
}

// BenchmarkVerify: a token's first check against the cached ones a client's
// later requests get.
func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	tokens, err := NewTokens([]byte(strings.Repeat("k", 32)), time.Hour, func() time.Time { return now })
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := tokens.Issue("2fYq1mZbXkL0aVdT3nQe5rWcPsH", "user-0001@example.com")
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := tokens.verify(tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tokens.Verify(tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}
