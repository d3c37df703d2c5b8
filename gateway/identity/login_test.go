package identity

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/auth/authtest"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/gateway/server/servertest"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// oneUser is an account store holding one user without two-factor; it
// records the sessions it is asked to create.
type oneUser struct {
	UserStore
	u        identity.User
	mu       sync.Mutex
	sessions []identity.Session
}

func (s *oneUser) ByEmail(_ context.Context, email string) (identity.User, error) {
	if !strings.EqualFold(email, s.u.Email) {
		return identity.User{}, postgres.ErrNotFound
	}
	return s.u, nil
}

func (s *oneUser) TOTP(context.Context, string) (identity.TOTP, error) {
	return identity.TOTP{}, postgres.ErrNotFound
}

func (s *oneUser) CreateSession(_ context.Context, sess identity.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = append(s.sessions, sess)
	return nil
}

// TestSessionRecordsTheClientAddress: behind a trusted proxy, the session a
// login starts records the client's address from X-Forwarded-For, not the
// proxy's (fiber's test connection, 0.0.0.0, plays the proxy).
func TestSessionRecordsTheClientAddress(t *testing.T) {
	t.Parallel()
	pw := NewPasswords(0, 0)
	hash, err := pw.Hash(context.Background(), "correct-horse-1")
	if err != nil {
		t.Fatal(err)
	}
	users := &oneUser{u: identity.User{ID: "u1", Email: "ip@example.com", PasswordHash: hash}}
	s := servertest.New()
	trusted, err := clientip.ParseTrusted("0.0.0.0/32")
	if err != nil {
		t.Fatal(err)
	}
	s.TrustProxies(trusted)
	tokens := authtest.New(t)
	h, err := NewHandlers(users, tokens.Authenticator, noRoles{}, noMailer{}, servertest.DB{}, time.Now, s.Routes,
		Config{BaseURL: "http://localhost", Vault: noVault{}, Passwords: pw})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	s.Finish()
	req := httptest.NewRequest(http.MethodPost, Prefix+"/login", strings.NewReader(`{"email":"ip@example.com","password":"correct-horse-1"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(clientip.HeaderForwardedFor, "203.0.113.5")
	resp, err := s.App.Test(req, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	if len(users.sessions) != 1 || users.sessions[0].IP != "203.0.113.5" {
		t.Fatalf("sessions = %+v, want one from 203.0.113.5 (the client), not the proxy", users.sessions)
	}
}
