package e2e

import (
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"
)

// TestMaskConcurrentCharges fires 200 concurrent charges of 100 cents at one
// merchant-locked mask whose 5000-cent limit admits 50 of them.
//
// What the rules imply, whatever order the charges arrive in (they are
// decided one at a time, in partition order):
//   - the first 50 decided are authorized; the spend limit, not the risk
//     score, is what stops the rest: before the first decline no score can
//     reach 80. Authorized scores are 5 for the first three, 35 (velocity)
//     from the fourth on, and 50 for the fiftieth (velocity + its 100 cents
//     are 100% of the 100 remaining);
//   - the other 150 are declined limit_exceeded. Their scores: the first
//     decline 50 (base 5 + 90% of nothing remaining 15 + velocity 30), every
//     later one 70 (+20, a decline in the last 10 minutes). Limit checks come
//     before the risk check, so none is risk_declined.
//
// The test asserts exactly that, that no remainingCents is ever negative
// (each authorized charge shows a distinct balance 4900, 4800, …, 0), and
// that replaying all 200 concurrently returns each first outcome.
func TestMaskConcurrentCharges(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "mask-race")
	m := createMask(t, p, u.Token, map[string]any{"kind": "merchant-locked", "lockedToMerchant": "Shop",
		"spendLimitCents": 5_000, "currency": "USD"})

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	const n = 200
	fire := func() []chargeResult {
		results := make([]chargeResult, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = chargeAsync(client, p, u.Token, chargeBody(m.ID, uniqueRef("race", i), 100, "Shop", "retail"))
			}()
		}
		close(start)
		wg.Wait()
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("charge %d: %v", i, r.err)
			}
		}
		return results
	}

	first := fire()
	var authScores, declScores []int
	var balances []int64
	for i, r := range first {
		switch r.status {
		case http.StatusCreated:
			c := r.view
			if c.Status != "authorized" || c.Idempotent {
				t.Fatalf("charge %d: %+v", i, c)
			}
			authScores = append(authScores, c.RiskScore)
			balances = append(balances, c.RemainingCents)
		case http.StatusPaymentRequired:
			if r.view.DeclineReason != "limit_exceeded" || r.view.Charge == nil {
				t.Fatalf("charge %d declined: %+v", i, r.view)
			}
			declScores = append(declScores, r.view.Charge.RiskScore)
		default:
			t.Fatalf("charge %d: status %d", i, r.status)
		}
	}
	if len(authScores) != 50 || len(declScores) != 150 {
		t.Fatalf("authorized %d, declined %d; want 50 and 150", len(authScores), len(declScores))
	}
	sort.Slice(balances, func(i, j int) bool { return balances[i] > balances[j] })
	for i, b := range balances {
		if want := int64(4_900 - 100*i); b != want {
			t.Fatalf("balances after authorized charges = %v", balances)
		}
	}
	wantAuth := []int{5, 5, 5}
	for range 46 {
		wantAuth = append(wantAuth, 35)
	}
	wantAuth = append(wantAuth, 50)
	wantDecl := []int{50}
	for range 149 {
		wantDecl = append(wantDecl, 70)
	}
	sort.Ints(authScores)
	sort.Ints(declScores)
	if !equalInts(authScores, wantAuth) || !equalInts(declScores, wantDecl) {
		t.Fatalf("scores: authorized %v, declined %v", authScores, declScores)
	}

	var list struct{ Items []maskView }
	p.Get(t, "/api/mask/masks", u.Token).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].RemainingCents != 0 {
		t.Fatalf("mask after the race = %+v", list.Items)
	}

	// Replays, all at once: each returns its first outcome.
	again := fire()
	for i, r := range again {
		f := first[i]
		switch f.status {
		case http.StatusCreated:
			if r.status != http.StatusOK || r.view.ID != f.view.ID || !r.view.Idempotent || r.view.Status != "authorized" {
				t.Fatalf("replay %d of an authorized charge: %d %+v", i, r.status, r.view)
			}
		case http.StatusPaymentRequired:
			if r.status != http.StatusPaymentRequired || r.view.Charge == nil || r.view.Charge.ID != f.view.Charge.ID ||
				!r.view.Idempotent || r.view.DeclineReason != "limit_exceeded" {
				t.Fatalf("replay %d of a declined charge: %d %+v", i, r.status, r.view)
			}
		}
	}
	p.Get(t, "/api/mask/masks", u.Token).Decode(t, &list)
	if list.Items[0].RemainingCents != 0 {
		t.Fatalf("replays changed the balance: %+v", list.Items[0])
	}
}

// TestMaskConcurrentReplays sends one new charge 20 times at once: exactly
// one answer is the first (201, idempotent false); the others are its
// replay (200, idempotent true), all with the same charge id, and the
// balance moves once.
func TestMaskConcurrentReplays(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "mask-replay")
	m := createMask(t, p, u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 10_000})
	client := &http.Client{Timeout: 30 * time.Second}
	const n = 20
	results := make([]chargeResult, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = chargeAsync(client, p, u.Token, chargeBody(m.ID, "same-ref", 700, "Shop", ""))
		}()
	}
	close(start)
	wg.Wait()
	firsts, id := 0, ""
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("charge %d: %v", i, r.err)
		}
		switch {
		case r.status == http.StatusCreated && !r.view.Idempotent:
			firsts++
		case r.status == http.StatusOK && r.view.Idempotent:
		default:
			t.Fatalf("charge %d: %d %+v", i, r.status, r.view)
		}
		if id == "" {
			id = r.view.ID
		}
		if r.view.ID != id || id == "" {
			t.Fatalf("charge ids differ: %s vs %s", r.view.ID, id)
		}
	}
	if firsts != 1 {
		t.Fatalf("%d first answers, want 1", firsts)
	}
	var list struct{ Items []maskView }
	p.Get(t, "/api/mask/masks", u.Token).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].RemainingCents != 9_300 {
		t.Fatalf("mask = %+v", list.Items)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
