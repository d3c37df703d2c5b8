package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// memSessions is an in-memory SessionStore that counts its calls.
type memSessions struct {
	mu      sync.Mutex
	rows    map[string]identity.SessionState
	reads   int
	touches int
}

func (m *memSessions) SessionState(_ context.Context, id string, _ time.Time) (identity.SessionState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	s, ok := m.rows[id]
	if !ok {
		return identity.SessionState{}, postgres.ErrNotFound
	}
	return s, nil
}

func (m *memSessions) TouchSession(_ context.Context, id string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.touches++
	s := m.rows[id]
	s.LastSeenAt = now
	m.rows[id] = s
	return nil
}

func (m *memSessions) end(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.rows[id]
	s.Live = false
	m.rows[id] = s
}

// TestSessionCheck: a live session is read once per SessionCacheTTL, not
// per request; a session ended by another process is refused after the TTL
// at most, one ended here (Ended) at once; last_seen_at is written at most
// once a minute; a token without a session, or with another user's, is
// refused.
func TestSessionCheck(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	store := &memSessions{rows: map[string]identity.SessionState{
		"s1": {UserID: "u1", Live: true, LastSeenAt: t0},
		"s2": {UserID: "u1", Live: true, LastSeenAt: t0},
	}}
	s, err := NewSessions(store, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u1s1 := Principal{UserID: "u1", SessionID: "s1"}
	for range 100 {
		if err := s.Check(ctx, u1s1); err != nil {
			t.Fatal(err)
		}
	}
	if store.reads != 1 || store.touches != 0 {
		t.Fatalf("100 checks: %d reads, %d touches; want 1 and 0", store.reads, store.touches)
	}

	store.end("s1") // ended by another gateway process
	clock = t0.Add(SessionCacheTTL - time.Millisecond)
	if err := s.Check(ctx, u1s1); err != nil {
		t.Fatalf("within the TTL the cached answer stands: %v", err)
	}
	clock = t0.Add(SessionCacheTTL)
	if err := s.Check(ctx, u1s1); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("after the TTL: %v, want ErrSessionEnded", err)
	}

	u1s2 := Principal{UserID: "u1", SessionID: "s2"}
	if err := s.Check(ctx, u1s2); err != nil {
		t.Fatal(err)
	}
	s.Ended("s2") // ended by this process
	if err := s.Check(ctx, u1s2); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("a session ended here: %v, want ErrSessionEnded at once", err)
	}

	for _, p := range []Principal{{UserID: "u1"}, {UserID: "u2", SessionID: "s2"}, {UserID: "u1", SessionID: "nope"}} {
		if err := s.Check(ctx, p); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("%+v: %v, want ErrSessionEnded", p, err)
		}
	}

	// last_seen_at: written once the row is a minute old, then not again
	// within the minute however many re-reads.
	store.rows["s3"] = identity.SessionState{UserID: "u1", Live: true, LastSeenAt: t0}
	u1s3 := Principal{UserID: "u1", SessionID: "s3"}
	clock = t0.Add(SessionTouchEvery)
	touches := store.touches
	for i := range 20 {
		clock = t0.Add(SessionTouchEvery + time.Duration(i)*SessionCacheTTL)
		if err := s.Check(ctx, u1s3); err != nil {
			t.Fatal(err)
		}
	}
	if got := store.touches - touches; got != 1 {
		t.Fatalf("%d last_seen writes over %s of use, want 1", got, 19*SessionCacheTTL)
	}
}

// TestAuthenticateNeedsLiveSession: with sessions in use, Require answers
// 401 auth_required to a token of an ended session and to a token without
// one (issued before sessions existed).
func TestAuthenticateNeedsLiveSession(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tokens, err := NewTokens([]byte(strings.Repeat("k", 32)), time.Hour, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	store := &memSessions{rows: map[string]identity.SessionState{"s1": {UserID: "u1", Live: true, LastSeenAt: now}}}
	s, _ := NewSessions(store, func() time.Time { return now })
	tokens.UseSessions(s)
	live, _, _ := tokens.IssueSession("u1", "a@b.co", "s1")
	old, _ := tokens.Issue("u1", "a@b.co")
	if _, err := tokens.Authenticate(context.Background(), live); err != nil {
		t.Fatalf("live session: %v", err)
	}
	var ae *apierr.Error
	if _, err := tokens.Authenticate(context.Background(), old); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("token without a session: %v, want 401", err)
	}
	s.Ended("s1")
	if _, err := tokens.Authenticate(context.Background(), live); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("ended session: %v, want 401", err)
	}
}

// BenchmarkRequire is the per-request cost of authentication through the
// Require middleware of a fiber app (a 204 handler behind it): "before" is
// the token check alone (what main did), "after" adds the session check
// (an in-process cache hit; the store is read once per SessionCacheTTL).
//
//	go test ./gateway/auth -run '^$' -bench BenchmarkRequire -count 3
func BenchmarkRequire(b *testing.B) {
	for _, withSessions := range []bool{false, true} {
		name := "before-token-only"
		if withSessions {
			name = "after-token-and-session"
		}
		b.Run(name, func(b *testing.B) {
			tokens, err := NewTokens([]byte(strings.Repeat("k", 32)), time.Hour, time.Now)
			if err != nil {
				b.Fatal(err)
			}
			store := &memSessions{rows: map[string]identity.SessionState{
				"2fYq1mZbXkL0aVdT3nQe5rWcPsS": {UserID: "2fYq1mZbXkL0aVdT3nQe5rWcPsH", Live: true, LastSeenAt: time.Now()}}}
			if withSessions {
				s, _ := NewSessions(store, time.Now)
				tokens.UseSessions(s)
			}
			tok, _, _ := tokens.IssueSession("2fYq1mZbXkL0aVdT3nQe5rWcPsH", "user-0001@example.com", "2fYq1mZbXkL0aVdT3nQe5rWcPsS")
			app := fiber.New()
			app.Get("/api/auth/me", tokens.Require(), func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
			h := app.Handler()
			var ctx fasthttp.RequestCtx
			ctx.Request.SetRequestURI("/api/auth/me")
			ctx.Request.Header.SetMethod(http.MethodGet)
			ctx.Request.Header.Set(fiber.HeaderAuthorization, "Bearer "+tok)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ctx.Response.Reset()
				h(&ctx)
				if ctx.Response.StatusCode() != http.StatusNoContent {
					b.Fatalf("status %d", ctx.Response.StatusCode())
				}
			}
		})
	}
}

// BenchmarkSessionCheck is the session check alone on a cache hit: what
// every authenticated request pays on top of the token check.
func BenchmarkSessionCheck(b *testing.B) {
	store := &memSessions{rows: map[string]identity.SessionState{"s1": {UserID: "u1", Live: true, LastSeenAt: time.Now()}}}
	s, _ := NewSessions(store, time.Now)
	p := Principal{UserID: "u1", SessionID: "s1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Check(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
