package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
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

// memSessions is an in-memory SessionStore that counts its calls. A
// session is live while Live is set and now is before ExpiresAt.
type memSessions struct {
	mu        sync.Mutex
	rows      map[string]identity.SessionState
	reads     int
	touches   int // single-session writes (TouchSession)
	refreshes int
	batched   int // last_seen writes carried by refreshes
	// failReads and failRefresh make those calls fail (database down).
	failReads, failRefresh bool
	// onRefresh runs after a refresh took its answer (its snapshot).
	onRefresh func()
	// onRead runs before a single read takes its answer.
	onRead func()
}

// liveRow is a live session of user last seen at seen, expiring a day later.
func liveRow(user string, seen time.Time) identity.SessionState {
	return identity.SessionState{UserID: user, Live: true, LastSeenAt: seen, ExpiresAt: seen.Add(24 * time.Hour)}
}

var errDown = errors.New("database down")

func (m *memSessions) SessionState(_ context.Context, id string, now time.Time) (identity.SessionState, error) {
	if m.onRead != nil {
		m.onRead()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if m.failReads {
		return identity.SessionState{}, errDown
	}
	s, ok := m.rows[id]
	if !ok {
		return identity.SessionState{}, postgres.ErrNotFound
	}
	s.Live = s.Live && now.Before(s.ExpiresAt)
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

func (m *memSessions) RefreshSessions(_ context.Context, ids, touch []string, now time.Time) ([]string, error) {
	m.mu.Lock()
	m.refreshes++
	if m.failRefresh {
		m.mu.Unlock()
		return nil, errDown
	}
	for _, id := range touch {
		if s, ok := m.rows[id]; ok && s.Live && s.LastSeenAt.Before(now) {
			s.LastSeenAt = now
			m.rows[id] = s
			m.batched++
		}
	}
	var live []string
	for _, id := range ids {
		if s, ok := m.rows[id]; ok && s.Live && now.Before(s.ExpiresAt) {
			live = append(live, id)
		}
	}
	m.mu.Unlock()
	if m.onRefresh != nil {
		m.onRefresh()
	}
	return live, nil
}

func (m *memSessions) end(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.rows[id]
	s.Live = false
	m.rows[id] = s
}

func (m *memSessions) counts() (reads, refreshes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.refreshes
}

// TestSessionCheck: without refreshes a live session is read once per
// SessionCacheTTL, not per request; a session ended by another process is
// refused after the TTL at most, one ended here (Ended) at once;
// last_seen_at is written at most once a minute; a token without a
// session, with another user's, or whose session expired is refused.
func TestSessionCheck(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	store := &memSessions{rows: map[string]identity.SessionState{
		"s1": liveRow("u1", t0),
		"s2": liveRow("u1", t0),
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
	reads := store.reads
	clock = t0.Add(10 * SessionCacheTTL)
	if err := s.Check(ctx, u1s1); !errors.Is(err, ErrSessionEnded) || store.reads != reads {
		t.Fatalf("an ended session: %v after %d more reads, want ErrSessionEnded without a read", err, store.reads-reads)
	}

	u1s2 := Principal{UserID: "u1", SessionID: "s2"}
	if err := s.Check(ctx, u1s2); err != nil {
		t.Fatal(err)
	}
	s.Ended("s2") // ended by this process
	if err := s.Check(ctx, u1s2); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("a session ended here: %v, want ErrSessionEnded at once", err)
	}

	store.rows["s4"] = liveRow("u2", clock)
	for _, p := range []Principal{{UserID: "u1"}, {UserID: "u2", SessionID: "s2"}, {UserID: "u1", SessionID: "nope"}, {UserID: "u1", SessionID: "s4"}} {
		if err := s.Check(ctx, p); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("%+v: %v, want ErrSessionEnded", p, err)
		}
	}

	// Expiry is the row's expires_at, whatever the cache last heard.
	store.rows["s5"] = identity.SessionState{UserID: "u1", Live: true, LastSeenAt: clock, ExpiresAt: clock.Add(time.Second)}
	u1s5 := Principal{UserID: "u1", SessionID: "s5"}
	if err := s.Check(ctx, u1s5); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	if err := s.Check(ctx, u1s5); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("at its expiry: %v, want ErrSessionEnded", err)
	}

	// last_seen_at: written once the row is a minute old, then not again
	// within the minute however many re-reads.
	store.rows["s3"] = liveRow("u1", t0)
	u1s3 := Principal{UserID: "u1", SessionID: "s3"}
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

// TestSessionRefreshIsOneStatement: with Refresh every SessionRefreshEvery,
// 200 sessions in use cost one statement per refresh and no single read
// after each one's first; their last_seen_at writes ride on the refreshes,
// once a minute each; a session ended elsewhere is refused after the next
// refresh; one nobody used lately is no longer refreshed and is read again
// before it is trusted.
func TestSessionRefreshIsOneStatement(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	store := &memSessions{rows: map[string]identity.SessionState{}}
	var users []Principal
	for i := range 200 {
		p := Principal{UserID: fmt.Sprintf("u%d", i), SessionID: fmt.Sprintf("s%d", i)}
		store.rows[p.SessionID] = liveRow(p.UserID, t0)
		users = append(users, p)
	}
	s, err := NewSessions(store, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checkAll := func(want error) {
		t.Helper()
		for _, p := range users {
			if err := s.Check(ctx, p); !errors.Is(err, want) {
				t.Fatalf("%s at %s: %v, want %v", p.SessionID, clock.Sub(t0), err, want)
			}
		}
	}
	checkAll(nil)
	const intervals = 150 // past two SessionTouchEvery
	for range intervals {
		clock = clock.Add(SessionRefreshEvery)
		if err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		checkAll(nil)
	}
	reads, refreshes := store.counts()
	if reads != len(users) || refreshes != intervals || store.touches != 0 {
		t.Fatalf("%d intervals of %d sessions: %d reads, %d refreshes, %d single touches; want %d, %d, 0",
			intervals, len(users), reads, refreshes, store.touches, len(users), intervals)
	}
	if want := 2 * len(users); store.batched != want {
		t.Fatalf("%d batched last_seen writes over %s, want %d (one a minute each)", store.batched, clock.Sub(t0), want)
	}

	store.end("s7") // ended by another process
	clock = clock.Add(SessionRefreshEvery)
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx, users[7]); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("after the refresh that saw its end: %v, want ErrSessionEnded", err)
	}

	// s9 goes unused: refreshes stop carrying it, and its next use reads it.
	users = append(users[:9], users[10:]...)
	users = slices.DeleteFunc(users, func(p Principal) bool { return p.SessionID == "s7" })
	for range 4 {
		clock = clock.Add(SessionRefreshEvery)
		if err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		checkAll(nil)
	}
	reads, _ = store.counts()
	if err := s.Check(ctx, Principal{UserID: "u9", SessionID: "s9"}); err != nil {
		t.Fatal(err)
	}
	if r, _ := store.counts(); r != reads+1 {
		t.Fatalf("a session unused for %s: %d reads at its next use, want 1", 4*SessionRefreshEvery, r-reads)
	}
}

// TestSessionEndBound: a session ended elsewhere is refused by every check
// from SessionCacheTTL after its end's commit on, however slow the refresh
// that last confirmed it (the confirmation dates from before the
// statement, not from its answer) and whether later refreshes fail; when
// the database is down, a session whose confirmation is that old is not
// trusted: the check fails with the read's error, as a single read did.
func TestSessionEndBound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	store := &memSessions{rows: map[string]identity.SessionState{"s1": liveRow("u1", t0), "s2": liveRow("u1", t0)}}
	s, err := NewSessions(store, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u1s1, u1s2 := Principal{UserID: "u1", SessionID: "s1"}, Principal{UserID: "u1", SessionID: "s2"}
	for _, p := range []Principal{u1s1, u1s2} {
		if err := s.Check(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	// A refresh whose statement takes its snapshot, then s1's end commits
	// a millisecond later, then the answer arrives 900 ms after the start.
	clock = t0.Add(SessionRefreshEvery)
	start := clock
	var committed time.Time
	store.onRefresh = func() {
		clock = clock.Add(time.Millisecond)
		store.end("s1")
		committed = clock
		clock = start.Add(900 * time.Millisecond)
	}
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	store.onRefresh = nil
	if err := s.Check(ctx, u1s1); err != nil {
		t.Fatalf("the refresh answered before the end: %v", err)
	}

	// Every refresh from now on fails.
	store.failRefresh = true
	for clock.Before(committed.Add(SessionCacheTTL)) {
		clock = clock.Add(SessionRefreshEvery / 4)
		if err := s.Refresh(ctx); err == nil {
			t.Fatal("a failing refresh answered nil")
		}
	}
	clock = committed.Add(SessionCacheTTL)
	if err := s.Check(ctx, u1s1); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("%s after its end's commit: %v, want ErrSessionEnded", SessionCacheTTL, err)
	}

	// The database goes down altogether: s2 was last confirmed at start;
	// from start+SessionCacheTTL its check reads it and fails with that read.
	store.failReads = true
	clock = start.Add(SessionCacheTTL - time.Millisecond)
	if err := s.Check(ctx, u1s2); err != nil {
		t.Fatalf("within the TTL of its confirmation: %v", err)
	}
	clock = start.Add(SessionCacheTTL)
	if err := s.Check(ctx, u1s2); !errors.Is(err, errDown) {
		t.Fatalf("at the TTL of its confirmation, database down: %v, want the read's error", err)
	}
}

// TestSessionEndedHereWinsOverARaceRead: a read or a refresh that began
// before this process ended the session cannot bring it back.
func TestSessionEndedHereWinsOverARaceRead(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &memSessions{rows: map[string]identity.SessionState{"s1": liveRow("u1", t0), "s2": liveRow("u1", t0)}}
	s, err := NewSessions(store, func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u1s1, u1s2 := Principal{UserID: "u1", SessionID: "s1"}, Principal{UserID: "u1", SessionID: "s2"}

	// The read takes its answer (live), then the session is ended here
	// before the answer is cached.
	var once sync.Once
	store.onRead = func() { once.Do(func() { s.Ended("s1") }) }
	_ = s.Check(ctx, u1s1)
	store.onRead = nil
	if err := s.Check(ctx, u1s1); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("ended here during its read: %v, want ErrSessionEnded", err)
	}

	if err := s.Check(ctx, u1s2); err != nil {
		t.Fatal(err)
	}
	store.onRefresh = func() { s.Ended("s2") }
	if err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx, u1s2); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("ended here during a refresh: %v, want ErrSessionEnded", err)
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
	store := &memSessions{rows: map[string]identity.SessionState{"s1": liveRow("u1", now)}}
	s, _ := NewSessions(store, func() time.Time { return now })
	a := newAuthenticator(t, tokens, s, &memKeys{})
	live, _, _ := tokens.IssueSession("u1", "a@b.co", "s1")
	old, _ := tokens.Issue("u1", "a@b.co")
	if _, err := a.Authenticate(context.Background(), live); err != nil {
		t.Fatalf("live session: %v", err)
	}
	var ae *apierr.Error
	if _, err := a.Authenticate(context.Background(), old); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("token without a session: %v, want 401", err)
	}
	s.Ended("s1")
	if _, err := a.Authenticate(context.Background(), live); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("ended session: %v, want 401", err)
	}
}

// BenchmarkRequire is the per-request cost of authentication through the
// Require middleware of a fiber app (a 204 handler behind it): "before" is
// the token check alone (what main did before sessions), "after" is the
// Authenticator's, which adds the session check (an in-process cache hit;
// the store is read once per SessionCacheTTL).
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
				"2fYq1mZbXkL0aVdT3nQe5rWcPsS": liveRow("2fYq1mZbXkL0aVdT3nQe5rWcPsH", time.Now())}}
			s, _ := NewSessions(store, time.Now)
			require := newAuthenticator(b, tokens, s, &memKeys{}).Require()
			if !withSessions {
				require = func(c *fiber.Ctx) error {
					tok, _ := BearerToken(c.Get(fiber.HeaderAuthorization))
					p, err := tokens.Verify(tok)
					if err != nil {
						return err
					}
					SetUser(c, p)
					return c.Next()
				}
			}
			tok, _, _ := tokens.IssueSession("2fYq1mZbXkL0aVdT3nQe5rWcPsH", "user-0001@example.com", "2fYq1mZbXkL0aVdT3nQe5rWcPsS")
			app := fiber.New()
			app.Get("/api/auth/me", require, func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
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
	store := &memSessions{rows: map[string]identity.SessionState{"s1": liveRow("u1", time.Now())}}
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
