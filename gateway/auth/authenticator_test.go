package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// memKeys is an in-memory KeyStore.
type memKeys struct {
	mu      sync.Mutex
	rows    []identity.APIKey
	lookups int
}

func (m *memKeys) ByHash(_ context.Context, hash []byte) (identity.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
	for _, r := range m.rows {
		if bytes.Equal(r.Hash, hash) {
			return r, nil
		}
	}
	return identity.APIKey{}, postgres.ErrNotFound
}

func (m *memKeys) Touch(context.Context, string, time.Time, time.Time) error { return nil }

func (m *memKeys) Live(_ context.Context, id string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.rows {
		if r.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// newAuthenticator builds an Authenticator whose keys need fiat:read on
// every route.
func newAuthenticator(t testing.TB, tokens *Tokens, s *Sessions, ks KeyStore) *Authenticator {
	t.Helper()
	keys, err := NewKeys(ks, func(*fiber.Ctx) string { return "fiat:read" }, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(tokens, s, keys)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestNewNeedsEveryDependency: the authenticator's token codec, session
// check and keys are the parameters of its one constructor (a wiring that
// leaves one out does not compile), a nil one fails construction, and
// nothing attaches a check afterwards (no setter on the codec or the
// authenticator).
func TestNewNeedsEveryDependency(t *testing.T) {
	t.Parallel()
	// Compile-time: New takes exactly these three, in this order.
	var _ func(*Tokens, *Sessions, *Keys) (*Authenticator, error) = New
	tokens, err := NewTokens([]byte(strings.Repeat("k", 32)), time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := NewSessions(&memSessions{}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := NewKeys(&memKeys{}, func(*fiber.Ctx) string { return "" }, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(tokens, sessions, keys); err != nil {
		t.Fatalf("all dependencies: %v", err)
	}
	for name, build := range map[string]func() (*Authenticator, error){
		"no token codec":   func() (*Authenticator, error) { return New(nil, sessions, keys) },
		"no session check": func() (*Authenticator, error) { return New(tokens, nil, keys) },
		"no API keys":      func() (*Authenticator, error) { return New(tokens, sessions, nil) },
	} {
		if a, err := build(); err == nil || a != nil {
			t.Errorf("%s: built %v, %v; want an error", name, a, err)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[*Tokens](), reflect.TypeFor[*Authenticator]()} {
		for i := range typ.NumMethod() {
			if m := typ.Method(i).Name; strings.HasPrefix(m, "Use") || strings.HasPrefix(m, "Set") {
				t.Errorf("%s has the setter %s: dependencies go through New", typ, m)
			}
		}
	}
}

// TestKeyKindsShareOneImplementation: every kind of the table is minted,
// hashed, shape-checked and found by the same code, in the formats keys
// were minted in before (so stored hashes stay valid): a malformed key is
// refused without a lookup, an unknown or tampered one as unknown.
func TestKeyKindsShareOneImplementation(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		prefix string
		body   int
		hex    bool
	}{
		"rk_live_": {"rk_live_", 43, false},
		"mk_live_": {"mk_live_", 32, true},
		"qb_pk_":   {"qb_pk_", 43, false},
	}
	if len(KeyKinds) != len(want) {
		t.Fatalf("KeyKinds has %d kinds, want %d", len(KeyKinds), len(want))
	}
	for _, kind := range KeyKinds {
		w, ok := want[kind.Prefix]
		if !ok {
			t.Fatalf("unexpected kind %q", kind.Prefix)
		}
		t.Run(kind.Prefix, func(t *testing.T) {
			t.Parallel()
			plain, hash, err := kind.Mint(bytes.NewReader(bytes.Repeat([]byte{0xab}, 64)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(plain, w.prefix) || len(plain) != len(w.prefix)+w.body {
				t.Fatalf("minted %q: want %s and %d characters", plain, w.prefix, w.body)
			}
			if w.hex && plain != w.prefix+strings.Repeat("ab", 16) {
				t.Fatalf("minted %q, want hex", plain)
			}
			sum := sha256.Sum256([]byte(plain))
			if !bytes.Equal(hash, sum[:]) || !bytes.Equal(kind.Hash(plain), sum[:]) {
				t.Fatalf("hash %x, want the SHA-256 of the key", hash)
			}
			if !kind.Is(plain) || !kind.WellFormed(plain) {
				t.Fatalf("a minted key %q is not of its kind", plain)
			}
			if _, _, err := kind.Mint(bytes.NewReader([]byte{1})); err == nil {
				t.Fatal("short entropy must fail")
			}
			// A store as the merchant table keeps it (hex text) and as the
			// others do (bytes): FindKey compares the stored hash itself.
			type row struct{ id, stored string }
			rows := map[string]row{hex.EncodeToString(hash): {"k1", hex.EncodeToString(hash)}}
			lookups := 0
			l := KeyLookup[row]{Kind: kind,
				ByHash: func(_ context.Context, h []byte) (row, error) {
					lookups++
					if r, ok := rows[hex.EncodeToString(h)]; ok {
						return r, nil
					}
					return row{}, postgres.ErrNotFound
				},
				Stored: func(r row) []byte { b, _ := hex.DecodeString(r.stored); return b }}
			got, err := l.Find(context.Background(), plain)
			if err != nil || got.id != "k1" {
				t.Fatalf("Find(minted) = %v, %v", got, err)
			}
			other, _, _ := kind.Mint(bytes.NewReader(bytes.Repeat([]byte{0xcd}, 64)))
			if _, err := l.Find(context.Background(), other); !errors.Is(err, ErrKeyUnknown) {
				t.Fatalf("Find(unknown) = %v, want ErrKeyUnknown", err)
			}
			before := lookups
			for _, bad := range []string{"", kind.Prefix, plain[:len(kind.Prefix)+10], plain + strings.Repeat("a", 100), plain[:len(plain)-1] + "!",
				strings.ToUpper(kind.Prefix) + plain[len(kind.Prefix):]} {
				if kind.WellFormed(bad) {
					t.Errorf("%q is well formed", bad)
				}
				if _, err := l.Find(context.Background(), bad); !errors.Is(err, ErrKeyUnknown) {
					t.Errorf("Find(%q) = %v, want ErrKeyUnknown", bad, err)
				}
			}
			if lookups != before {
				t.Errorf("malformed keys were looked up %d times", lookups-before)
			}
			// A row whose stored hash is not the key's (a store answering
			// wrongly) is refused.
			rows[hex.EncodeToString(hash)] = row{"k1", hex.EncodeToString(make([]byte, 32))}
			if _, err := l.Find(context.Background(), plain); !errors.Is(err, ErrKeyUnknown) {
				t.Fatalf("Find with a mismatched stored hash = %v, want ErrKeyUnknown", err)
			}
		})
	}
}

// TestAuthenticatorCaller: one middleware tells API keys from login tokens:
// a key acts within its scopes, a login token needs its live session, and
// anything else is 401.
func TestAuthenticatorCaller(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tokens, err := NewTokens([]byte(strings.Repeat("k", 32)), time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := NewSessions(&memSessions{rows: map[string]identity.SessionState{"s1": liveRow("u1", now)}}, time.Now)
	readKey, readHash, _ := RestrictedKeys.Mint(bytes.NewReader(bytes.Repeat([]byte{1}, 32)))
	ledgerKey, ledgerHash, _ := RestrictedKeys.Mint(bytes.NewReader(bytes.Repeat([]byte{2}, 32)))
	ks := &memKeys{rows: []identity.APIKey{
		{ID: "k1", UserID: "u1", Hash: readHash, Scopes: []string{"fiat:read"}, LastUsedAt: &now},
		{ID: "k2", UserID: "u1", Hash: ledgerHash, Scopes: []string{"ledger:read"}, LastUsedAt: &now},
	}}
	a := newAuthenticator(t, tokens, s, ks)
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		if ae, ok := errors.AsType[*apierr.Error](err); ok {
			return c.SendStatus(ae.Status)
		}
		return c.SendStatus(http.StatusInternalServerError)
	}})
	app.Get("/x", a.Require(), func(c *fiber.Ctx) error {
		p, _ := User(c)
		return c.SendString(p.UserID + "/" + p.KeyID)
	})
	login, _, _ := tokens.IssueSession("u1", "a@b.co", "s1")
	noSession, _ := tokens.Issue("u1", "a@b.co")
	for _, tt := range []struct {
		name, header string
		status       int
		body         string
	}{
		{"login token", "Bearer " + login, http.StatusOK, "u1/"},
		{"key with the scope", "Bearer " + readKey, http.StatusOK, "u1/k1"},
		{"key without the scope", "Bearer " + ledgerKey, http.StatusForbidden, ""},
		{"unknown key", "Bearer " + RestrictedKeys.Prefix + strings.Repeat("A", 43), http.StatusUnauthorized, ""},
		{"token without a session", "Bearer " + noSession, http.StatusUnauthorized, ""},
		{"no credential", "", http.StatusUnauthorized, ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.status || (tt.body != "" && string(body) != tt.body) {
			t.Errorf("%s: %d %q, want %d %q", tt.name, resp.StatusCode, body, tt.status, tt.body)
		}
	}
}
