package relay_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// outboxLockSQL finds the backend that holds the outbox lock in the test's
// database.
const outboxLockSQL = `SELECT coalesce(max(pid), 0) FROM pg_locks WHERE locktype = 'advisory' AND granted
	AND classid = $1 AND objid = $2 AND objsubid = 1
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// TestRelayThatLostItsLockStopsPublishing: the leader's lock connection is
// terminated (as an idle timeout, a proxy or a failover would). It stops
// publishing at once; the other relay takes the lock over and publishes
// every later event, each once: no event goes out from two relays.
func TestRelayThatLostItsLockStopsPublishing(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := func(reg *prometheus.Registry, campaign time.Duration) func() {
		cl, err := topics.NewClient(e.brokers)
		if err != nil {
			t.Fatal(err)
		}
		r := relay.New(e.pool, topics.NewProducer(cl), reg, slog.New(slog.NewTextHandler(io.Discard, nil)),
			relay.WithCampaignInterval(campaign))
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		return func() { stop(); <-done; cl.Close() }
	}
	// The first leader would try for the lock again only after a minute:
	// whatever it publishes after losing the lock, it published without it.
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(0, "")}); err != nil {
		t.Fatal(err)
	}
	stopA := start(regA, time.Minute)
	defer stopA()
	waitFor(ctx, t, "the first relay publishes", func() bool { return published(t, regA) == 1 })
	stopB := start(regB, 20*time.Millisecond)
	defer stopB()

	var pidA int
	if err := e.pool.QueryRow(ctx, outboxLockSQL, lockHi, lockLo).Scan(&pidA); err != nil || pidA == 0 {
		t.Fatalf("no backend holds the outbox lock (%v)", err)
	}
	var gone bool
	if err := e.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, pidA).Scan(&gone); err != nil || !gone {
		t.Fatalf("terminate the lock connection: %v %v", gone, err)
	}
	const n = 40
	for i := 1; i <= n; i++ {
		if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(i, "")}); err != nil {
			t.Fatal(err)
		}
	}
	last := lastSeq(t, e.pool)
	waitFor(ctx, t, "every event is published", func() bool { return cursor(t, e.pool) >= last })
	var pidB int
	if err := e.pool.QueryRow(ctx, outboxLockSQL, lockHi, lockLo).Scan(&pidB); err != nil || pidB == 0 || pidB == pidA {
		t.Fatalf("the lock is held by %d (was %d, %v): the second relay did not take over", pidB, pidA, err)
	}
	if a, b := published(t, regA), published(t, regB); a != 1 || b != n {
		t.Fatalf("the first relay published %d events, the second %d: want 1 and %d (the first went on without its lock)", a, b, n)
	}
	if got := len(e.consume(ctx, t, topics.EventsFiat, n+1)); got != n+1 {
		t.Fatalf("consumed %d events, want %d", got, n+1)
	}
}

// The outbox lock key's halves, as pg_locks shows an advisory bigint key.
const (
	lockHi = 0x6f75
	lockLo = 0x74626f78
)

func published(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "platform_outbox_published_total" {
			return int(mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	return 0
}

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
