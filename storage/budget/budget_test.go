package budget_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/budget"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestTakeAllOrNone: the IP counter stops many accounts behind one
// address, the global one only reports (it never refuses), a refusal
// charges nothing, a refund gives back, and a new window starts afresh.
func TestTakeAllOrNone(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	b := schemas.Budget{Name: "t", Period: schemas.PerDay, PerAccount: 2, PerIP: 3, Global: 5}
	day, _ := b.Window(time.Now())
	take := func(account, ip string) (budget.Charge, bool) {
		t.Helper()
		c, ok, err := budget.Take(ctx, pool, day, budget.Charges(b, account, ip))
		if err != nil {
			t.Fatal(err)
		}
		return c, ok
	}
	// Three accounts behind one IP: 3 in all, whatever the accounts hold.
	for i, acc := range []string{"a1", "a2", "a3"} {
		if _, ok := take(acc, "10.0.0.1"); !ok {
			t.Fatalf("take %d refused", i)
		}
	}
	c, ok := take("a4", "10.0.0.1")
	if ok || c.Scope != budget.ScopeIP {
		t.Fatalf("fourth account on one IP: ok %v scope %q", ok, c.Scope)
	}
	// The refusal charged a4 nothing.
	if n, err := budget.Used(ctx, pool, day, budget.Charge{Budget: "t", Scope: budget.ScopeAccount, Subject: "a4"}); err != nil || n != 0 {
		t.Fatalf("a refused take charged the account: %d %v", n, err)
	}
	// Concurrent takers from other IPs: the global 5 is an alarm, not a
	// kill switch: all are granted, and those past it are reported.
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted, over := 0, 0
	for i := range 10 {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := budget.TakeAll(ctx, pool, day, budget.Charges(b, "", "10.0.1."+string(rune('0'+i))))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if r.OK {
				granted++
			}
			for _, c := range r.Over {
				if c.Scope == budget.ScopeGlobal {
					over++
				}
			}
		}(i)
	}
	wg.Wait()
	if granted != 10 || over != 8 {
		t.Fatalf("%d of 10 takes granted, %d reported over the global 5 (3 taken before); want 10 and 8", granted, over)
	}
	// A refund gives a unit back to each counter, never below zero.
	ip := budget.Charges(b, "a9", "10.0.0.9")
	if _, ok := take("a9", "10.0.0.9"); !ok {
		t.Fatal("a9 refused")
	}
	if err := budget.Refund(ctx, pool, day, ip); err != nil {
		t.Fatal(err)
	}
	if err := budget.Refund(ctx, pool, day, ip); err != nil {
		t.Fatal(err)
	}
	for _, c := range ip[:2] {
		if n, err := budget.Used(ctx, pool, day, c); err != nil || n != 0 {
			t.Fatalf("%s after refunds: %d %v", c.Scope, n, err)
		}
	}
	// The next day starts afresh; pruning drops the old window.
	if _, ok, err := budget.Take(ctx, pool, day.AddDate(0, 0, 1), budget.Charges(b, "a4", "10.0.0.1")); err != nil || !ok {
		t.Fatalf("next day: %v %v", ok, err)
	}
	if n, err := budget.Prune(ctx, pool, day.AddDate(0, 0, 1)); err != nil || n == 0 {
		t.Fatalf("prune: %d %v", n, err)
	}
}
