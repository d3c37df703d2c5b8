package identity_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/names"
)

// TestAccountLimitsAndRetention: at most ResetMailsPerDay reset links per
// account a day; five wrong second-factor attempts lock the account until
// the oldest leaves the window, under parallel attempts too, and a right
// code's attempt is given back; the pruner removes ended sessions, old
// links, revoked keys and old attempts, and keeps what is live.
func TestAccountLimitsAndRetention(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	users := identity.NewUsers(pool)
	keys := identity.NewAPIKeys(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	u := identity.User{ID: "u1", Email: "u1@example.com", PasswordHash: "h0", CreatedAt: now}
	if err := users.Create(ctx, u, pipeline.OutboxRow{Topic: names.EventsIdentity, Key: "u1", Type: "user.registered",
		EventID: "e1", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}

	for i := range identity.ResetMailsPerDay {
		if err := users.CreatePasswordResetCapped(ctx, fmt.Sprint("t", i), "u1", now.Add(30*time.Minute), now, identity.ResetMailsPerDay); err != nil {
			t.Fatalf("link %d: %v", i+1, err)
		}
	}
	if err := users.CreatePasswordResetCapped(ctx, "t-over", "u1", now.Add(30*time.Minute), now, identity.ResetMailsPerDay); !errors.Is(err, identity.ErrResetCap) {
		t.Fatalf("a 6th link within a day: %v, want ErrResetCap", err)
	}
	if err := users.CreatePasswordResetCapped(ctx, "t-next-day", "u1", now.Add(identity.ResetWindow+time.Hour),
		now.Add(identity.ResetWindow+time.Minute), identity.ResetMailsPerDay); err != nil {
		t.Fatalf("a link a day later: %v", err)
	}

	// Twenty parallel attempts: exactly five are counted, the rest locked.
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken, locked := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := users.TakeMFAAttempt(ctx, "u1", now, 15*time.Minute, 5)
			mu.Lock()
			defer mu.Unlock()
			var l *identity.MFALocked
			switch {
			case err == nil:
				taken++
			case errors.As(err, &l) && l.RetryAfter > 0:
				locked++
			default:
				t.Errorf("attempt: %v", err)
			}
		}()
	}
	wg.Wait()
	if taken != 5 || locked != 15 {
		t.Fatalf("parallel attempts: %d counted, %d locked; want 5 and 15", taken, locked)
	}
	id, err := users.TakeMFAAttempt(ctx, "u1", now.Add(16*time.Minute), 15*time.Minute, 5)
	if err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if err := users.ReturnMFAAttempt(ctx, id); err != nil {
		t.Fatal(err)
	}

	s := func(id string, expires time.Time) identity.Session {
		return identity.Session{ID: id, UserID: "u1", CreatedAt: now.Add(-60 * 24 * time.Hour), ExpiresAt: expires}
	}
	for _, sess := range []identity.Session{s("old-expired", now.Add(-40*24*time.Hour)), s("live", now.Add(time.Hour))} {
		if err := users.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	if err := keys.Create(ctx, identity.APIKey{ID: "k1", UserID: "u1", Name: "k", Prefix: "rk_live_x", Hash: []byte("h1"),
		Scopes: []string{"fiat:read"}, CreatedAt: now}, 3); err != nil {
		t.Fatal(err)
	}
	if err := keys.Revoke(ctx, "u1", "k1", now.Add(-40*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := keys.Create(ctx, identity.APIKey{ID: "k2", UserID: "u1", Name: "k", Prefix: "rk_live_y", Hash: []byte("h2"),
		Scopes: []string{"fiat:read"}, CreatedAt: now}, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := users.PruneAccounts(ctx, now.Add(-30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if live, _ := users.Sessions(ctx, "u1", now); len(live) != 1 || live[0].ID != "live" {
		t.Fatalf("sessions after pruning: %+v", live)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM auth_sessions`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("session rows after pruning: %d %v", n, err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM api_keys`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("key rows after pruning: %d %v (the revoked one goes, the live one stays)", n, err)
	}
	if _, err := users.PruneAccounts(ctx, now.Add(2*identity.ResetWindow)); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"password_resets", "mfa_attempts"} {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s rows after pruning: %d %v", table, n, err)
		}
	}
}
