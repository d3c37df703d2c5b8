package identity_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/names"
)

// TestCredentialsSpendOnce: under concurrent use, a TOTP step is accepted
// once, a recovery code works once and a reset link resets once; a password
// change ends the other sessions and keeps the current one.
func TestCredentialsSpendOnce(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	users := identity.NewUsers(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	u := identity.User{ID: "u1", Email: "u1@example.com", PasswordHash: "h0", CreatedAt: now}
	row := pipeline.OutboxRow{Topic: names.EventsIdentity, Key: "u1", Type: "user.registered", EventID: "e1", Payload: []byte(`{}`)}
	if err := users.Create(ctx, u, row); err != nil {
		t.Fatal(err)
	}
	if err := users.StartTOTP(ctx, "u1", "sealed", now); err != nil {
		t.Fatal(err)
	}
	if ok, _ := users.UseTOTPStep(ctx, "u1", 100); ok {
		t.Fatal("a pending enrolment accepted a code")
	}
	if err := users.ConfirmTOTP(ctx, "u1", 100, []string{"c1", "c2"}, now); err != nil {
		t.Fatal(err)
	}
	if err := users.StartTOTP(ctx, "u1", "other", now); !errors.Is(err, postgres.ErrConflict) {
		t.Fatalf("restart of a confirmed enrolment: %v, want ErrConflict", err)
	}

	race := func(what string, use func() (bool, error)) {
		t.Helper()
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := use()
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%s: %d of 8 concurrent uses accepted, want 1", what, wins.Load())
		}
	}
	race("TOTP step 101", func() (bool, error) { return users.UseTOTPStep(ctx, "u1", 101) })
	if ok, _ := users.UseTOTPStep(ctx, "u1", 100); ok {
		t.Fatal("an older step was accepted after a newer one")
	}
	race("recovery code", func() (bool, error) { return users.UseRecoveryCode(ctx, "u1", "c1", now) })

	for _, id := range []string{"s1", "s2", "s3"} {
		if err := users.CreateSession(ctx, identity.Session{ID: id, UserID: "u1", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	ended, err := users.SetPassword(ctx, "u1", "h1", "s2", now)
	if err != nil || len(ended) != 2 {
		t.Fatalf("set password ended %v (%v), want s1 and s3", ended, err)
	}
	if live, _ := users.Sessions(ctx, "u1", now); len(live) != 1 || live[0].ID != "s2" {
		t.Fatalf("live sessions after the change = %+v", live)
	}

	if err := users.CreatePasswordReset(ctx, "t1", "u1", now.Add(30*time.Minute), now); err != nil {
		t.Fatal(err)
	}
	race("reset link", func() (bool, error) {
		_, _, err := users.ResetPassword(ctx, "t1", "h2", now)
		if errors.Is(err, postgres.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
	if live, _ := users.Sessions(ctx, "u1", now); len(live) != 0 {
		t.Fatalf("sessions after a reset = %+v, want none", live)
	}
	if err := users.CreatePasswordReset(ctx, "t2", "u1", now.Add(-time.Second), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.ResetPassword(ctx, "t2", "h3", now); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("expired link: %v, want ErrNotFound", err)
	}
}
