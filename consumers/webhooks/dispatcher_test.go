package webhooks_test

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/webhooks"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

type countingWaker struct{ n atomic.Int64 }

func (w *countingWaker) Wake() { w.n.Add(1) }

// runDispatcher runs a dispatcher on the broker at addrs over st until the
// test ends.
func runDispatcher(t *testing.T, addrs []string, st webhooks.EventStore, adminEmails []string, w webhooks.Waker) {
	t.Helper()
	d, err := webhooks.NewDispatcher(addrs, st, adminEmails, w, quiet, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// eventProducer returns a client of the broker at addrs (closed when the
// test ends) and a function that produces an envelope and waits for its
// acknowledgement.
func eventProducer(t *testing.T, addrs []string) (*kgo.Client, func(topic string, env schemas.Envelope)) {
	t.Helper()
	cl, err := topics.NewClient(addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, func(topic string, env schemas.Envelope) {
		t.Helper()
		rec, err := topics.Record(topic, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// The dispatcher reads the events topics from a real (embedded) broker and
// records one delivery per matching subscription; a redelivered event adds
// nothing.
func TestDispatcherRecordsMatchingDeliveries(t *testing.T) {
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	f := newFixture(t)
	ctx := context.Background()
	alice := f.subscribe(t, "https://alice.example/hook", "secret-0123456789ab")
	adminSub := f.subscribe(t, "https://admin.example/hook", "secret-0123456789ab")
	var aliceID, adminEmail string
	if err := f.pool.QueryRow(ctx, `SELECT user_id FROM webhook_subscriptions WHERE id = $1`, alice).Scan(&aliceID); err != nil {
		t.Fatal(err)
	}
	// The allowlist holds lower-cased e-mails (auth.ParseAllowlist); only a
	// verified, operator-confirmed address confers the admin's view.
	if err := f.pool.QueryRow(ctx, `UPDATE users u SET email_verified_at = now(), role_confirmed_at = now() FROM webhook_subscriptions s
WHERE u.id = s.user_id AND s.id = $1 RETURNING lower(u.email)`, adminSub).Scan(&adminEmail); err != nil {
		t.Fatal(err)
	}
	// Only a subscription the admin's login session made receives every
	// event (the gateway sets all_events; an API key's never has it).
	if _, err := f.pool.Exec(ctx, `UPDATE webhook_subscriptions SET all_events = true WHERE id = $1`, adminSub); err != nil {
		t.Fatal(err)
	}

	w := &countingWaker{}
	runDispatcher(t, broker.Addrs(), f.store, []string{adminEmail}, w)
	cl, produce := eventProducer(t, broker.Addrs())
	mine, _ := schemas.New("transfer.completed", "w1", aliceID, map[string]any{"txId": "t1"}, time.Now())
	other, _ := schemas.New("charge.authorized", "m1", "someone-else", map[string]any{"maskId": "m1"}, time.Now())
	produce(topics.EventsFiat, mine)
	produce(topics.EventsMask, other)
	produce(topics.EventsFiat, mine) // redelivered by an at-least-once relay

	type pair struct{ sub, event, typ string }
	want := []pair{{alice, mine.ID, "transfer.completed"}, {adminSub, mine.ID, "transfer.completed"}, {adminSub, other.ID, "charge.authorized"}}
	sort.Slice(want, func(i, j int) bool { return want[i].sub+want[i].event < want[j].sub+want[j].event })
	var got []pair
	waitFor(t, 15*time.Second, "three deliveries", func() bool {
		rows, err := f.store.List(ctx, store.Filter{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, r := range rows {
			got = append(got, pair{r.WebhookID, r.EventID, r.Type})
		}
		return len(got) >= 3
	})
	// The dispatcher commits a poll only after recording its deliveries: once
	// it committed past every event, the duplicate had its chance.
	waitFor(t, 15*time.Second, "the dispatcher to commit past every event", func() bool {
		var lag int64
		for _, topic := range []string{topics.EventsFiat, topics.EventsMask} {
			n, err := topics.Lag(ctx, cl, topics.GroupWebhooks, topic)
			if err != nil {
				return false
			}
			lag += n
		}
		return lag == 0
	})
	rows, _ := f.store.List(ctx, store.Filter{Limit: 50})
	if len(rows) != 3 {
		t.Fatalf("%d deliveries, want 3: %+v", len(rows), rows)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].sub+got[i].event < got[j].sub+got[j].event })
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("deliveries %v, want %v", got, want)
		}
	}
	for _, r := range rows {
		if r.Status != store.StatusPending || r.Attempts != 0 {
			t.Fatalf("new delivery %+v", r)
		}
	}
	if w.n.Load() == 0 {
		t.Fatal("the scheduler was never woken")
	}
}

// countingStore counts the batches the dispatcher handles (each checks for
// subscriptions once) on the real store.
type countingStore struct {
	*store.Store
	batches atomic.Int64
}

func (c *countingStore) HasSubscriptions(ctx context.Context) (bool, error) {
	c.batches.Add(1)
	return c.Store.HasSubscriptions(ctx)
}

// TestDispatcherGathersEventsUnderLoad: events published one every few
// milliseconds (a relay under load publishes every 50–100 ms, more often
// with a backlog) reach the dispatcher in batches of about 100 ms, not one
// batch per publish: each batch costs a Postgres transaction and an offset
// commit (issue 38). Every event is still recorded.
func TestDispatcherGathersEventsUnderLoad(t *testing.T) {
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	f := newFixture(t)
	ctx := context.Background()
	alice := f.subscribe(t, "https://alice.example/hook", "secret-0123456789ab")
	var aliceID string
	if err := f.pool.QueryRow(ctx, `SELECT user_id FROM webhook_subscriptions WHERE id = $1`, alice).Scan(&aliceID); err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: f.store}
	runDispatcher(t, broker.Addrs(), st, nil, &countingWaker{})
	_, produce := eventProducer(t, broker.Addrs())
	// The group has joined once it handled a first event.
	first, _ := schemas.New("transfer.completed", "w1", aliceID, map[string]any{"txId": "t0"}, time.Now())
	produce(topics.EventsFiat, first)
	waitFor(t, 15*time.Second, "the first event", func() bool { return st.batches.Load() > 0 })

	const n = 200
	start, batches0 := time.Now(), st.batches.Load()
	for i := 1; i <= n; i++ {
		env, _ := schemas.New("transfer.completed", "w1", aliceID, map[string]any{"txId": i}, time.Now())
		produce(topics.EventsFiat, env)
		time.Sleep(5 * time.Millisecond) // a publish every 5 ms or more
	}
	waitFor(t, 15*time.Second, "every event recorded", func() bool {
		var k int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries`).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k == n+1
	})
	took, batches := time.Since(start), st.batches.Load()-batches0
	// One batch per gather window, two of slack (the windows need not
	// line up with the first and last event).
	if limit := int64(took/(100*time.Millisecond)) + 2; batches > limit {
		t.Fatalf("%d events over %v came in %d batches: want at most %d, about one per 100 ms", n, took.Round(time.Millisecond), batches, limit)
	}
}
