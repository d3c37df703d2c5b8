package auth

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// countingStore counts the statements a Sessions sends to the real store.
type countingStore struct {
	*identity.Users
	reads, refreshes atomic.Int64
}

func (c *countingStore) SessionState(ctx context.Context, id string, now time.Time) (identity.SessionState, error) {
	c.reads.Add(1)
	return c.Users.SessionState(ctx, id, now)
}

func (c *countingStore) RefreshSessions(ctx context.Context, ids, touch []string, now time.Time) ([]string, error) {
	c.refreshes.Add(1)
	return c.Users.RefreshSessions(ctx, ids, touch, now)
}

// TestSessionEndedAcrossProcesses: two session checks on one real database,
// as two gateway processes with their own pools, each refreshing (Run).
// Both trust 20 sessions; the first ends one: it refuses it at once, and the
// second refuses it from SessionCacheTTL after the end's commit at the
// latest: no check that began later answered live. The second meanwhile
// keeps answering the other sessions from its refreshes.
func TestSessionEndedAcrossProcesses(t *testing.T) {
	pool, url := pgtest.NewDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	users := identity.NewUsers(pool)
	now := time.Now().UTC()
	row := pipeline.OutboxRow{Topic: topics.EventsIdentity, Key: "u1", Type: "user.registered", EventID: "e1", Payload: []byte(`{}`)}
	if err := users.Create(ctx, identity.User{ID: "u1", Email: "u1@example.com", PasswordHash: "h", CreatedAt: now}, row); err != nil {
		t.Fatal(err)
	}
	var all []Principal
	for i := range 20 {
		p := Principal{UserID: "u1", SessionID: fmt.Sprintf("s%02d", i)}
		if err := users.CreateSession(ctx, identity.Session{ID: p.SessionID, UserID: "u1", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	first, err := NewSessions(users, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Users: identity.NewUsers(other)}
	second, err := NewSessions(store, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Sessions{first, second} {
		go func() { _ = s.Run(ctx) }()
		for _, p := range all {
			if err := s.Check(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Let the second confirm its sessions by a refresh before the end.
	for deadline := time.Now().Add(10 * SessionCacheTTL); store.refreshes.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no refresh ran")
		}
		if err := second.Check(ctx, all[0]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	ended := all[5]
	if err := users.EndSession(ctx, "u1", ended.SessionID, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	committed := time.Now() // at or after the commit
	first.Ended(ended.SessionID)
	if err := first.Check(ctx, ended); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("the process that ended it: %v, want ErrSessionEnded at once", err)
	}
	for {
		began := time.Now()
		err := second.Check(ctx, ended)
		if errors.Is(err, ErrSessionEnded) {
			t.Logf("the second process refused the ended session %s after its end", time.Since(committed).Round(time.Millisecond))
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !began.Before(committed.Add(SessionCacheTTL)) {
			t.Fatalf("a check that began %s after the end's commit answered live; the bound is %s", began.Sub(committed), SessionCacheTTL)
		}
		for _, p := range all {
			if p != ended {
				if err := second.Check(ctx, p); err != nil {
					t.Fatalf("%s: %v", p.SessionID, err)
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := store.refreshes.Load(); r < 2 {
		t.Fatalf("%d refreshes ran, want the second process refreshing", r)
	}
}
