package identity_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/names"
)

// TestRefreshSessions: one RefreshSessions answers exactly the live ones
// among ended, expired, unknown and live ids, and writes last_seen_at only
// on the live sessions it was asked to touch, never backwards.
func TestRefreshSessions(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	users := identity.NewUsers(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := pipeline.OutboxRow{Topic: names.EventsIdentity, Key: "u1", Type: "user.registered", EventID: "e1", Payload: []byte(`{}`)}
	if err := users.Create(ctx, identity.User{ID: "u1", Email: "u1@example.com", PasswordHash: "h", CreatedAt: now}, row); err != nil {
		t.Fatal(err)
	}
	seen := now.Add(-2 * time.Minute)
	for _, s := range []identity.Session{
		{ID: "live", ExpiresAt: now.Add(time.Hour)},
		{ID: "live-untouched", ExpiresAt: now.Add(time.Hour)},
		{ID: "ended", ExpiresAt: now.Add(time.Hour)},
		{ID: "expired", ExpiresAt: now},
	} {
		s.UserID, s.CreatedAt = "u1", seen
		if err := users.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := users.EndSession(ctx, "u1", "ended", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	ids := []string{"live", "live-untouched", "ended", "expired", "unknown"}
	live, err := users.RefreshSessions(ctx, ids, []string{"live", "ended", "expired"}, now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(live)
	if want := []string{"live", "live-untouched"}; !slices.Equal(live, want) {
		t.Fatalf("live = %v, want %v", live, want)
	}
	for id, want := range map[string]time.Time{"live": now, "live-untouched": seen, "ended": seen, "expired": seen} {
		var got time.Time
		if err := pool.QueryRow(ctx, `SELECT last_seen_at FROM auth_sessions WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("%s: last_seen_at %s, want %s", id, got, want)
		}
	}
	if _, err := users.RefreshSessions(ctx, []string{"live"}, []string{"live"}, now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	var got time.Time
	if err := pool.QueryRow(ctx, `SELECT last_seen_at FROM auth_sessions WHERE id = 'live'`).Scan(&got); err != nil || !got.Equal(now) {
		t.Fatalf("an older touch moved last_seen_at to %s (%v), want it kept at %s", got, err, now)
	}
	if live, err := users.RefreshSessions(ctx, []string{"live"}, nil, now.Add(2*time.Hour)); err != nil || len(live) != 0 {
		t.Fatalf("at a time past its expiry: %v (%v), want none live", live, err)
	}
}
