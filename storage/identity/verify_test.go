package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestVerificationCapAndPrune: an address is sent at most max links a day,
// whichever account asks and however its case is written; retryAt is when
// the oldest leaves the window; another address is not affected; links are
// pruned once older than the cut-off.
func TestVerificationCapAndPrune(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	users := identity.NewUsers(pool)
	ctx := context.Background()
	a, b := schemas.NewID(), schemas.NewID()
	for _, u := range [][2]string{{a, "victim@example.com"}, {b, "other@example.com"}} {
		if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'x')`, u[0], u[1]); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().UTC().Truncate(time.Second)
	for i := range 5 {
		at := start.Add(time.Duration(i) * time.Minute)
		email := "victim@example.com"
		if i%2 == 1 {
			email = "Victim@Example.com"
		}
		if _, err := users.CreateVerificationCapped(ctx, schemas.NewID(), a, email, at.Add(24*time.Hour), at, 5); err != nil {
			t.Fatalf("link %d: %v", i+1, err)
		}
	}
	retryAt, err := users.CreateVerificationCapped(ctx, schemas.NewID(), a, "VICTIM@example.com", start.Add(time.Hour), start.Add(10*time.Minute), 5)
	if !errors.Is(err, identity.ErrVerificationCap) || !retryAt.Equal(start.Add(identity.VerificationWindow)) {
		t.Fatalf("6th link: %v, retry at %v; want the cap and %v", err, retryAt, start.Add(identity.VerificationWindow))
	}
	if _, err := users.CreateVerificationCapped(ctx, schemas.NewID(), b, "other@example.com", start.Add(time.Hour), start, 5); err != nil {
		t.Fatalf("another address: %v", err)
	}
	next := start.Add(identity.VerificationWindow + time.Second)
	if _, err := users.CreateVerificationCapped(ctx, schemas.NewID(), a, "victim@example.com", next.Add(time.Hour), next, 5); err != nil {
		t.Fatalf("after the oldest left the window: %v", err)
	}
	n, err := users.PruneVerifications(ctx, start.Add(3*time.Minute))
	if err != nil || n != 4 { // the victim's first three and the other's
		t.Fatalf("pruned %d (%v), want 4", n, err)
	}
}
