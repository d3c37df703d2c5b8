package webhooks_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/webhooks"
)

func addUser(t *testing.T, pool *pgxpool.Pool, email string) string {
	t.Helper()
	id := schemas.NewID()
	if _, err := pool.Exec(context.Background(),
		`INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'x')`, id, email); err != nil {
		t.Fatalf("insert user: %v", err)
	}
	return id
}

func TestSubscriptions(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	u := addUser(t, pool, "sub@example.com")
	t0 := time.Now().UTC().Truncate(time.Millisecond)

	first, created, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u,
		URL: "https://a.example/hook", Secret: "s1-0123456789abcdef", CreatedAt: t0})
	if err != nil || !created || first.Events != nil {
		t.Fatalf("first save: %+v created=%v err=%v", first, created, err)
	}
	second, created, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u,
		URL: "https://b.example/hook", Secret: "s2-0123456789abcdef", Events: []string{"transfer.completed"}, CreatedAt: t0.Add(time.Hour)})
	if err != nil || created {
		t.Fatalf("replace: created=%v err=%v", created, err)
	}
	if second.ID != first.ID || second.URL != "https://b.example/hook" || second.Secret != "s2-0123456789abcdef" ||
		len(second.Events) != 1 || !second.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("replace kept id and createdAt, changed the rest: %+v vs %+v", second, first)
	}

	rot, err := st.RotateSecret(ctx, u, "", "s3-0123456789abcdef", nil, t0)
	if err != nil || rot.ID != first.ID || rot.Secret != "s3-0123456789abcdef" {
		t.Fatalf("rotate primary: %+v %v", rot, err)
	}
	if _, err := st.RotateSecret(ctx, u, "nope", "s4-0123456789abcdef", nil, t0); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("rotate unknown id: %v", err)
	}
	other := addUser(t, pool, "other@example.com")
	if _, err := st.RotateSecret(ctx, other, first.ID, "s4-0123456789abcdef", nil, t0); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("rotating another user's subscription: %v", err)
	}

	// Further subscriptions up to the cap (the primary counts).
	for i := 0; i < 2; i++ {
		if _, err := st.Add(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u, URL: "https://c.example",
			Secret: "s-0123456789abcdef", CreatedAt: t0}, 3); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	if _, err := st.Add(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u, URL: "https://c.example",
		Secret: "s-0123456789abcdef", CreatedAt: t0}, 3); !errors.Is(err, webhooks.ErrLimit) {
		t.Fatalf("add over the cap: %v", err)
	}
}

// TestAllEventsAudience: an admin's subscription receives every event only
// when it was made as an all-events one (an admin's login session, never an
// API key), and only while its owner is a confirmed admin — with two-factor
// on under RequireAdminMFA — re-checked at every batch; replacing the URL
// without the right drops it.
func TestAllEventsAudience(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	adm := addUser(t, pool, "root@example.com")
	if _, err := pool.Exec(ctx, `UPDATE users SET email_verified_at = now(), role_confirmed_at = now() WHERE id = $1`, adm); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	_, err := st.Add(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: adm, URL: "https://key.example",
		Secret: "secret-0123456789ab", CreatedAt: now}, 10)
	if err != nil {
		t.Fatal(err)
	}
	bySession, err := st.Add(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: adm, URL: "https://session.example",
		Secret: "secret-0123456789ab", CreatedAt: now, AllEvents: true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	admins := []string{"root@example.com"}
	allEvents := func(what string, want ...string) {
		t.Helper()
		cands, err := st.Candidates(ctx, []string{"someone-else"}, admins)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cands {
			if c.Admin {
				got = append(got, c.ID)
			}
		}
		if len(got) != len(want) || (len(want) == 1 && got[0] != want[0]) {
			t.Fatalf("%s: all-events subscriptions %v, want %v", what, got, want)
		}
	}
	allEvents("development", bySession.ID)
	st.RequireAdminMFA(true)
	allEvents("production, admin without two-factor")
	if _, err := pool.Exec(ctx, `INSERT INTO user_totp (user_id, secret, created_at, confirmed_at) VALUES ($1, 'x', now(), now())`, adm); err != nil {
		t.Fatal(err)
	}
	allEvents("production, admin with two-factor", bySession.ID)
	url := "https://elsewhere.example"
	if _, err := st.Update(ctx, adm, bySession.ID, webhooks.Patch{URL: &url}, now); err != nil {
		t.Fatal(err)
	}
	allEvents("after a new URL without the right")
}

func TestDeliveryLifecycle(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	u := addUser(t, pool, "owner@example.com")
	adm := addUser(t, pool, "Admin@Example.com")
	now := time.Now().UTC().Truncate(time.Millisecond)

	if has, err := st.HasSubscriptions(ctx); err != nil || has {
		t.Fatalf("HasSubscriptions on an empty table = %v, %v", has, err)
	}
	sub, _, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: u, URL: "https://a.example",
		Secret: "secret-0123456789ab", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	admSub, _, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: adm, URL: "https://adm.example",
		Secret: "secret-0123456789ab", CreatedAt: now, AllEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	// An allow-listed address that is not verified gets no admin view.
	cands, err := st.Candidates(ctx, []string{u}, []string{"admin@example.com"})
	if err != nil || len(cands) != 1 || cands[0].Admin {
		t.Fatalf("candidates with an unverified admin: %+v %v", cands, err)
	}
	// Verified through the web only: still no admin view.
	if _, err := pool.Exec(ctx, `UPDATE users SET email_verified_at = now() WHERE id = $1`, adm); err != nil {
		t.Fatal(err)
	}
	cands, err = st.Candidates(ctx, []string{u}, []string{"admin@example.com"})
	if err != nil || len(cands) != 1 || cands[0].Admin {
		t.Fatalf("candidates with an admin verified through the web only: %+v %v", cands, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE users SET role_confirmed_at = now() WHERE id = $1`, adm); err != nil {
		t.Fatal(err)
	}
	cands, err = st.Candidates(ctx, []string{u}, []string{"admin@example.com"})
	if err != nil || len(cands) != 2 {
		t.Fatalf("candidates: %+v %v", cands, err)
	}
	for _, c := range cands {
		if c.Admin != (c.ID == admSub.ID) || c.Secret != "" {
			t.Fatalf("candidate %+v", c)
		}
	}

	ev := webhooks.Event{ID: schemas.NewID(), Type: "transfer.completed", Module: "fiat", Data: []byte(`{"x":1}`), OccurredAt: now}
	pairs := []webhooks.NewDelivery{{SubscriptionID: sub.ID, EventID: ev.ID}, {SubscriptionID: admSub.ID, EventID: ev.ID}}
	n, err := st.Record(ctx, []webhooks.Event{ev}, pairs, now)
	if err != nil || n != 2 {
		t.Fatalf("record: %d %v", n, err)
	}
	// A redelivered event queues nothing new.
	if n, err := st.Record(ctx, []webhooks.Event{ev}, pairs, now); err != nil || n != 0 {
		t.Fatalf("record again: %d %v", n, err)
	}

	// Two concurrent claimers never get the same row.
	var mu sync.Mutex
	claimed := map[string]string{}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := schemas.NewID()
			jobs, err := st.ClaimDue(ctx, webhooks.Claim{Now: now, Limit: 10, PerSubscription: 4,
				LeaseUntil: now.Add(time.Minute), Token: tok})
			if err != nil {
				t.Errorf("claim: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, j := range jobs {
				if _, dup := claimed[j.DeliveryID]; dup {
					t.Errorf("delivery %s claimed twice", j.DeliveryID)
				}
				claimed[j.DeliveryID] = tok
				if j.Event.ID != ev.ID || string(j.Event.Data) != `{"x":1}` || j.Secret != "secret-0123456789ab" {
					t.Errorf("job %+v", j)
				}
			}
		}()
	}
	wg.Wait()
	if len(claimed) != 2 {
		t.Fatalf("claimed %d deliveries, want 2", len(claimed))
	}
	// Leased rows are not due again before the lease ends.
	if jobs, err := st.ClaimDue(ctx, webhooks.Claim{Now: now.Add(30 * time.Second), Limit: 10, PerSubscription: 4,
		LeaseUntil: now.Add(time.Hour), Token: "t"}); err != nil || len(jobs) != 0 {
		t.Fatalf("claim during lease: %d %v", len(jobs), err)
	}

	list, err := st.List(ctx, webhooks.Filter{WebhookID: sub.ID, Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("list by webhook: %+v %v", list, err)
	}
	d := list[0]
	tok := claimed[d.ID]
	next := now.Add(time.Minute)
	if held, err := st.Finish(ctx, d.ID, "wrong-token", webhooks.Result{Status: webhooks.StatusDelivered, Attempts: 1, At: now}); err != nil || held {
		t.Fatalf("finish with a stale token: held=%v %v", held, err)
	}
	if held, err := st.Finish(ctx, d.ID, tok, webhooks.Result{Status: webhooks.StatusFailed, Attempts: 1, StatusCode: 503,
		Error: "endpoint answered 503", NextAttemptAt: &next, At: now}); err != nil || !held {
		t.Fatalf("finish: held=%v %v", held, err)
	}
	got, err := st.Get(ctx, d.ID)
	if err != nil || got.Status != webhooks.StatusFailed || got.Attempts != 1 || got.LastStatusCode == nil ||
		*got.LastStatusCode != 503 || got.LastError != "endpoint answered 503" || !got.NextAttemptAt.Equal(next) ||
		got.Type != "transfer.completed" || got.EventID != ev.ID || got.WebhookID != sub.ID {
		t.Fatalf("after a failed attempt: %+v %v", got, err)
	}

	// An admin retry makes it due now and drops any claim.
	later := now.Add(2 * time.Second)
	got, err = st.Retry(ctx, d.ID, later)
	if err != nil || got.Status != webhooks.StatusPending || !got.NextAttemptAt.Equal(later) {
		t.Fatalf("retry: %+v %v", got, err)
	}
	if _, err := st.Retry(ctx, "missing", later); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("retry unknown: %v", err)
	}
	jobs, err := st.ClaimDue(ctx, webhooks.Claim{Now: later, Limit: 10, PerSubscription: 4, LeaseUntil: later.Add(time.Minute), Token: "t2"})
	if err != nil || len(jobs) != 1 || jobs[0].DeliveryID != d.ID || jobs[0].Attempts != 1 {
		t.Fatalf("claim after retry: %+v %v", jobs, err)
	}

	// Pagination: newest first, cursor = (creation time, id) of the last row.
	pos := func(d webhooks.Delivery) schemas.Position { return schemas.Position{At: d.CreatedAt, ID: d.ID} }
	p1, err := st.List(ctx, webhooks.Filter{Limit: 1})
	if err != nil || len(p1) != 1 {
		t.Fatal(err)
	}
	p2, err := st.List(ctx, webhooks.Filter{Limit: 1, Before: pos(p1[0])})
	if err != nil || len(p2) != 1 || p2[0].ID == p1[0].ID || p2[0].CreatedAt.After(p1[0].CreatedAt) {
		t.Fatalf("second page %+v after %s: %v", p2, p1[0].ID, err)
	}
	if p3, err := st.List(ctx, webhooks.Filter{Limit: 1, Before: pos(p2[0])}); err != nil || len(p3) != 0 {
		t.Fatalf("third page %+v %v", p3, err)
	}
}

func TestClaimPerSubscriptionCap(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	now := time.Now().UTC()
	var subs []string
	for _, e := range []string{"a@example.com", "b@example.com"} {
		s, _, err := st.SavePrimary(ctx, webhooks.Subscription{ID: schemas.NewID(), UserID: addUser(t, pool, e),
			URL: "https://x.example", Secret: "secret-0123456789ab", CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s.ID)
	}
	var events []webhooks.Event
	var pairs []webhooks.NewDelivery
	for i := 0; i < 5; i++ {
		ev := webhooks.Event{ID: schemas.NewID(), Type: "t", Module: "m", Data: []byte(`{}`), OccurredAt: now}
		events = append(events, ev)
		pairs = append(pairs, webhooks.NewDelivery{SubscriptionID: subs[0], EventID: ev.ID})
	}
	pairs = append(pairs, webhooks.NewDelivery{SubscriptionID: subs[1], EventID: events[0].ID})
	if _, err := st.Record(ctx, events, pairs, now); err != nil {
		t.Fatal(err)
	}
	jobs, err := st.ClaimDue(ctx, webhooks.Claim{Now: now, Limit: 10, PerSubscription: 2, LeaseUntil: now.Add(time.Minute), Token: "a"})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, j := range jobs {
		per[j.SubscriptionID]++
	}
	if per[subs[0]] != 2 || per[subs[1]] != 1 {
		t.Fatalf("claimed per subscription %v, want 2 and 1", per)
	}
	jobs, err = st.ClaimDue(ctx, webhooks.Claim{Now: now, Limit: 10, PerSubscription: 2, Exclude: []string{subs[0]},
		LeaseUntil: now.Add(time.Minute), Token: "b"})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("claim excluding the busy subscription: %d %v", len(jobs), err)
	}
}

func TestWalletOwners(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	st := webhooks.NewStore(pool)
	ctx := context.Background()
	u := addUser(t, pool, "w@example.com")
	var table string
	if err := pool.QueryRow(ctx, `SELECT COALESCE(to_regclass('fiat_wallets'), to_regclass('wallets'))::text`).Scan(&table); err != nil || table == "" {
		t.Fatal("no fiat wallet table in this build's migrations")
	}
	wid := schemas.NewID()
	if _, err := pool.Exec(ctx, `INSERT INTO `+table+` (id, user_id, currency) VALUES ($1, $2, 'KZT')`, wid, u); err != nil {
		t.Fatalf("insert wallet: %v", err)
	}
	owners, err := st.WalletOwners(ctx, []string{wid, "unknown"})
	if err != nil || len(owners) != 1 || owners[wid] != u {
		t.Fatalf("owners %v %v", owners, err)
	}
	// Without the fiat module's table the lookup finds nobody and does not fail.
	if _, err := pool.Exec(ctx, `DROP TABLE `+table+` CASCADE`); err != nil {
		t.Fatal(err)
	}
	owners, err = st.WalletOwners(ctx, []string{wid})
	if err != nil || len(owners) != 0 {
		t.Fatalf("owners without the table: %v %v", owners, err)
	}
}
