// Package authtest builds an auth.Authenticator over in-memory sessions
// and API keys, for handler tests that need a signed-in caller without a
// database.
package authtest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// Secret is the JWT secret of the fixture's token codec.
const Secret = "0123456789abcdef0123456789abcdef"

// Fixture is an authenticator with its in-memory stores. API keys are
// closed on every route (no route scope).
type Fixture struct {
	*auth.Authenticator
	Tokens   *auth.Tokens
	sessions *Sessions
}

// New builds the fixture; it fails the test when a part cannot be built.
func New(t testing.TB) *Fixture {
	t.Helper()
	tokens, err := auth.NewTokens([]byte(Secret), time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	store := &Sessions{rows: map[string]identity.SessionState{}}
	sessions, err := auth.NewSessions(store, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.NewKeys(NoKeys{}, func(*fiber.Ctx) string { return "" }, time.Now,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(tokens, sessions, keys)
	if err != nil {
		t.Fatal(err)
	}
	return &Fixture{Authenticator: a, Tokens: tokens, sessions: store}
}

// Login starts a live session for the user and returns its bearer token.
func (f *Fixture) Login(t testing.TB, userID, email string) string {
	t.Helper()
	sid := SessionOf(userID)
	f.sessions.mu.Lock()
	f.sessions.rows[sid] = identity.SessionState{UserID: userID, Live: true, LastSeenAt: time.Now(),
		ExpiresAt: time.Now().Add(24 * time.Hour)}
	f.sessions.mu.Unlock()
	tok, _, err := f.IssueSession(userID, email, sid)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// SessionOf is the id of the session Login starts for userID.
func SessionOf(userID string) string { return "s-" + strings.ReplaceAll(userID, " ", "-") }

// Sessions is an in-memory auth.SessionStore.
type Sessions struct {
	mu   sync.Mutex
	rows map[string]identity.SessionState
}

var _ auth.SessionStore = (*Sessions)(nil)

// SessionState implements auth.SessionStore.
func (s *Sessions) SessionState(_ context.Context, id string, now time.Time) (identity.SessionState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok {
		return identity.SessionState{}, postgres.ErrNotFound
	}
	r.Live = r.Live && now.Before(r.ExpiresAt)
	return r, nil
}

// TouchSession implements auth.SessionStore.
func (s *Sessions) TouchSession(context.Context, string, time.Time) error { return nil }

// RefreshSessions implements auth.SessionStore.
func (s *Sessions) RefreshSessions(_ context.Context, ids, _ []string, now time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []string
	for _, id := range ids {
		if r, ok := s.rows[id]; ok && r.Live && now.Before(r.ExpiresAt) {
			live = append(live, id)
		}
	}
	return live, nil
}

// NoKeys is an auth.KeyStore that holds no key.
type NoKeys struct{}

var _ auth.KeyStore = NoKeys{}

// ByHash implements auth.KeyStore.
func (NoKeys) ByHash(context.Context, []byte) (identity.APIKey, error) {
	return identity.APIKey{}, postgres.ErrNotFound
}

// Touch implements auth.KeyStore.
func (NoKeys) Touch(context.Context, string, time.Time, time.Time) error { return nil }

// Live implements auth.KeyStore.
func (NoKeys) Live(context.Context, string, time.Time) (bool, error) { return false, nil }
