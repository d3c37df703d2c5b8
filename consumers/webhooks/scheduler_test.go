package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/consumers/webhooks"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/sealed"
	store "github.com/fintech/platform/storage/webhooks"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// receiver is a loopback endpoint that verifies every request's spec
// signature with secret and answers with the next status of script (200
// once the script is used up), after delay.
type receiver struct {
	srv    *httptest.Server
	secret string
	delay  time.Duration

	mu      sync.Mutex
	script  []int
	got     []received
	badSigs int
}

type received struct {
	at      time.Time
	eventID string
	body    map[string]any
}

func newReceiver(t *testing.T, secret string, delay time.Duration, script ...int) *receiver {
	r := &receiver{secret: secret, delay: delay, script: script}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-req.Context().Done():
			return
		}
	}
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(req.Header.Get("X-Platform-Timestamp") + "."))
	mac.Write(body)
	ok := hmac.Equal([]byte(req.Header.Get("X-Platform-Signature")), []byte("sha256="+hex.EncodeToString(mac.Sum(nil))))
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.badSigs++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.got = append(r.got, received{at: time.Now(), eventID: req.Header.Get("webhook-id"), body: m})
	status := http.StatusOK
	if len(r.script) > 0 {
		status, r.script = r.script[0], r.script[1:]
	}
	w.WriteHeader(status)
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

type fixture struct {
	pool  *pgxpool.Pool
	store *store.Store
}

func newFixture(t *testing.T) fixture {
	pool, _ := pgtest.NewDB(t)
	return fixture{pool: pool, store: store.NewStore(pool)}
}

// subscribe creates a user with a primary endpoint at url.
func (f fixture) subscribe(t *testing.T, url, secret string) string {
	t.Helper()
	ctx := context.Background()
	uid := schemas.NewID()
	if _, err := f.pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'x')`, uid, uid+"@example.com"); err != nil {
		t.Fatal(err)
	}
	s, _, err := f.store.SavePrimary(ctx, store.Subscription{ID: schemas.NewID(), UserID: uid, URL: url, Secret: secret,
		CreatedAt: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// queue records n events for the subscription and returns their ids.
func (f fixture) queue(t *testing.T, subID string, n int) []string {
	t.Helper()
	var evs []store.Event
	var pairs []store.NewDelivery
	var ids []string
	for i := 0; i < n; i++ {
		ev := store.Event{ID: schemas.NewID(), Type: "transfer.completed", Module: "fiat",
			Data: []byte(`{"txId":"t1","amountKzt":100}`), OccurredAt: time.Now()}
		evs = append(evs, ev)
		pairs = append(pairs, store.NewDelivery{SubscriptionID: subID, EventID: ev.ID})
		ids = append(ids, ev.ID)
	}
	if _, err := f.store.Record(context.Background(), evs, pairs, time.Now()); err != nil {
		t.Fatal(err)
	}
	return ids
}

func (f fixture) run(t *testing.T, cfg webhooks.SchedulerConfig, allowPrivate bool) *webhooks.Scheduler {
	t.Helper()
	s, err := webhooks.NewScheduler(cfg, f.store, webhooks.NewSender(cfg.Timeout, allowPrivate, testVault(t), time.Now),
		prometheus.NewRegistry(), quiet, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}

func (f fixture) delivery(t *testing.T, subID string) store.Delivery {
	t.Helper()
	rows, err := f.store.List(context.Background(), store.Filter{WebhookID: subID, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("deliveries of %s: %+v %v", subID, rows, err)
	}
	return rows[0]
}

func TestSchedulerRetriesOnScheduleUntilDelivered(t *testing.T) {
	f := newFixture(t)
	const secret = "receiver-secret-0123456789"
	rcv := newReceiver(t, secret, 0, 500, 500, 503, 404) // four failures, then 200
	sub := f.subscribe(t, rcv.srv.URL, secret)
	ids := f.queue(t, sub, 1)
	schedule := []time.Duration{0, 150 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}
	f.run(t, webhooks.SchedulerConfig{Schedule: schedule, Timeout: 2 * time.Second, Poll: 20 * time.Millisecond}, true)

	waitFor(t, 10*time.Second, "delivered", func() bool {
		return f.delivery(t, sub).Status == store.StatusDelivered
	})
	d := f.delivery(t, sub)
	if d.Attempts != 5 || d.LastStatusCode == nil || *d.LastStatusCode != 200 {
		t.Fatalf("delivery %+v", d)
	}
	got := rcv.received()
	if len(got) != 5 || rcv.badSigs != 0 {
		t.Fatalf("receiver got %d requests (%d badly signed), want 5", len(got), rcv.badSigs)
	}
	for i, r := range got {
		if r.eventID != ids[0] || r.body["id"] != ids[0] || r.body["type"] != "transfer.completed" || r.body["module"] != "fiat" {
			t.Fatalf("attempt %d: %+v", i+1, r)
		}
		if i > 0 && r.at.Sub(got[i-1].at) < 140*time.Millisecond {
			t.Fatalf("attempt %d came %s after the previous one, before the schedule's 150ms", i+1, r.at.Sub(got[i-1].at))
		}
	}
}

func TestSchedulerDeadLettersAfterFiveFailures(t *testing.T) {
	f := newFixture(t)
	const secret = "receiver-secret-0123456789"
	rcv := newReceiver(t, secret, 0, 500, 500, 500, 500, 500)
	sub := f.subscribe(t, rcv.srv.URL, secret)
	f.queue(t, sub, 1)
	s := f.run(t, webhooks.SchedulerConfig{Schedule: []time.Duration{0, 10 * time.Millisecond, 10 * time.Millisecond,
		10 * time.Millisecond, 10 * time.Millisecond}, Timeout: 2 * time.Second, Poll: 20 * time.Millisecond}, true)
	waitFor(t, 10*time.Second, "dead_letter", func() bool { return f.delivery(t, sub).Status == store.StatusDeadLetter })
	d := f.delivery(t, sub)
	if d.Attempts != 5 || d.NextAttemptAt != nil || d.LastError != "endpoint answered 500" {
		t.Fatalf("dead letter %+v", d)
	}
	// An admin retry makes one more attempt, which the receiver now accepts.
	if _, err := f.store.Retry(context.Background(), d.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Wake()
	waitFor(t, 5*time.Second, "delivered after retry", func() bool { return f.delivery(t, sub).Status == store.StatusDelivered })
	if d := f.delivery(t, sub); d.Attempts != 6 {
		t.Fatalf("attempts after the retry = %d, want 6", d.Attempts)
	}
}

// A receiver that never answers holds at most PerSubscription workers and
// its own timeout: another receiver's deliveries go out at once.
func TestSchedulerIsolatesHangingReceiver(t *testing.T) {
	f := newFixture(t)
	const secret = "receiver-secret-0123456789"
	hang := newReceiver(t, secret, time.Hour)
	fast := newReceiver(t, secret, 0)
	hangSub := f.subscribe(t, hang.srv.URL, secret)
	fastSub := f.subscribe(t, fast.srv.URL, secret)
	f.queue(t, hangSub, 20)
	f.run(t, webhooks.SchedulerConfig{Schedule: []time.Duration{0, time.Hour, time.Hour, time.Hour, time.Hour},
		Timeout: time.Second, Workers: 4, PerSubscription: 2, Poll: 20 * time.Millisecond}, true)
	time.Sleep(200 * time.Millisecond) // the hanging endpoint's attempts are in flight
	start := time.Now()
	f.queue(t, fastSub, 3)
	waitFor(t, 2*time.Second, "the fast receiver's deliveries", func() bool { return len(fast.received()) == 3 })
	if el := time.Since(start); el > time.Second {
		t.Fatalf("fast receiver served after %s", el)
	}
	// And the hanging one fails by its timeout, not later.
	waitFor(t, 4*time.Second, "timeouts recorded", func() bool {
		rows, _ := f.store.List(context.Background(), store.Filter{WebhookID: hangSub, Status: store.StatusFailed, Limit: 50})
		return len(rows) >= 2 && rows[0].LastError == "no answer within 1s"
	})
}

func TestSenderRefusesPrivateAddresses(t *testing.T) {
	rcv := newReceiver(t, "receiver-secret-0123456789", 0)
	s := webhooks.NewSender(2*time.Second, false, testVault(t), time.Now)
	a := s.Deliver(context.Background(), store.Job{URL: rcv.srv.URL, Secret: "receiver-secret-0123456789",
		Event: store.Event{ID: "e", Type: "t", Module: "m", Data: []byte(`{}`)}})
	if a.OK || a.Error != "destination address is private, loopback or link-local" || len(rcv.received()) != 0 {
		t.Fatalf("attempt to loopback without WEBHOOK_ALLOW_PRIVATE: %+v", a)
	}
}

// testVault opens the fixtures' secrets, which are stored unsealed (as
// rows from before encryption at rest are).
func testVault(t *testing.T) *sealed.Keyring {
	t.Helper()
	v, err := sealed.NewKeyring("TEST_KEY", "data", "test-data-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSchedulerCapsOneOwner: one user's many slow endpoints hold at most
// PerOwner workers together (not PerSubscription each), so another user's
// deliveries go out while they hang.
func TestSchedulerCapsOneOwner(t *testing.T) {
	f := newFixture(t)
	const secret = "receiver-secret-0123456789"
	var mu sync.Mutex
	inFlight, peak := 0, 0
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body, so that the server notices the client leaving.
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		<-r.Context().Done()
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	t.Cleanup(hang.Close)
	fast := newReceiver(t, secret, 0)
	first := f.subscribe(t, hang.URL+"/0", secret)
	var owner string
	if err := f.pool.QueryRow(context.Background(), `SELECT user_id FROM webhook_subscriptions WHERE id = $1`, first).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	subs := []string{first}
	for i := 1; i < 6; i++ {
		s, err := f.store.Add(context.Background(), store.Subscription{ID: schemas.NewID(), UserID: owner,
			URL: hang.URL + "/" + strconv.Itoa(i), Secret: secret, CreatedAt: time.Now().Add(-time.Hour)}, 10)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s.ID)
	}
	for _, s := range subs {
		f.queue(t, s, 6)
	}
	f.run(t, webhooks.SchedulerConfig{Schedule: []time.Duration{0, time.Hour, time.Hour, time.Hour, time.Hour},
		Timeout: 3 * time.Second, Workers: 16, PerSubscription: 4, PerOwner: 5, Poll: 20 * time.Millisecond}, true)
	waitFor(t, 5*time.Second, "the owner's attempts in flight", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inFlight >= 5
	})
	f.queue(t, f.subscribe(t, fast.srv.URL, secret), 3)
	waitFor(t, 5*time.Second, "another user's deliveries", func() bool { return len(fast.received()) == 3 })
	mu.Lock()
	defer mu.Unlock()
	if peak != 5 {
		t.Fatalf("one owner's 6 hanging endpoints held %d attempts at once, want PerOwner = 5 (of 16 workers)", peak)
	}
}
