package relay_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// roundTrips records, through pgx's tracer hooks on a real connection, the
// round trips a relay sends outside a transaction block (each is an
// implicit transaction: one commit in pg_stat_database) with the statements
// of each, and counts its publish loops (each checks the lock once).
type roundTrips struct {
	mu    sync.Mutex
	trips [][]string
	loops int
}

const (
	lockCheck    = "FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
	horizonRead  = "pg_snapshot_xmin(pg_current_snapshot())"
	logRead      = "FROM event_log"
	cursorUpdate = "UPDATE event_log_cursor"
)

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips = append(c.trips, []string{d.SQL})
	if strings.Contains(d.SQL, lockCheck) {
		c.loops++
	}
	return ctx
}

func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips = append(c.trips, nil)
	return ctx
}

func (c *roundTrips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(d.SQL, lockCheck) {
		c.loops++
	}
	if n := len(c.trips); n > 0 {
		c.trips[n-1] = append(c.trips[n-1], d.SQL)
	}
}

func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *roundTrips) read() (trips, loops int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.trips), c.loops
}

// since returns the round trips from the i-th on.
func (c *roundTrips) since(i int) [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.trips[i:]...)
}

func has(trip []string, part string) bool {
	for _, q := range trip {
		if strings.Contains(q, part) {
			return true
		}
	}
	return false
}

// tracedPool is a pool on the test's database whose connections record
// their round trips.
func tracedPool(ctx context.Context, t *testing.T, e *env) (*pgxpool.Pool, *roundTrips) {
	t.Helper()
	cfg := e.pool.Config().Copy()
	counter := &roundTrips{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, counter
}

// TestRelayIdleLoopIsOneTransaction: with nothing to publish, a leader's
// loop is one round trip (the lock check and the horizon read together),
// so one commit, not one per statement (issue 38: the relay's polls were
// the largest source of Postgres commits per transfer after the gateway's
// session reads).
func TestRelayIdleLoopIsOneTransaction(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pool, counter := tracedPool(ctx, t, e)
	r := (&env{pool: pool, brokers: e.brokers}).relay(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()

	// Past the start (the lock, the cursor, the partition maintenance).
	waitFor(ctx, t, "the relay loops", func() bool { _, l := counter.read(); return l >= 3 })
	trips0, loops0 := counter.read()
	waitFor(ctx, t, "twenty more loops", func() bool { _, l := counter.read(); return l >= loops0+20 })
	trips1, loops1 := counter.read()
	trips, loops := trips1-trips0, loops1-loops0
	// A loop may be cut between the two reads: one round trip of slack.
	if trips > loops+1 {
		t.Fatalf("%d round trips (implicit transactions) in %d idle loops: want one per loop", trips, loops)
	}
}

// TestRelayPublishIsTwoRoundTrips: publishing a batch costs two round trips,
// so two commits: the horizon with the rows it proves (the log read rides
// in the horizon's round trip), and the cursor update, which takes the next
// bound in its own transaction — its xid serves as the bound's, so no
// publish waits a loop of its own to take one. Before, a batch took four:
// a loop to take the bound, a loop to prove it, the read and the cursor
// update. Each publish's hook inserts the next event, as under load: every
// publish then finds the one before it proved its event.
func TestRelayPublishIsTwoRoundTrips(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pool, counter := tracedPool(ctx, t, e)
	const n = 20
	inserted := 0
	insert := func(ctx context.Context) error {
		if inserted == n {
			return nil
		}
		inserted++
		return pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(inserted, "")})
	}
	r := (&env{pool: pool, brokers: e.brokers}).relay(t, relay.WithAfterPublish(insert))
	if err := insert(ctx); err != nil {
		t.Fatal(err)
	}
	published, calls := 0, 0
	for cursor(t, e.pool) < int64(n) {
		if ctx.Err() != nil {
			t.Fatalf("cursor at %d after %d calls, want %d", cursor(t, e.pool), calls, n)
		}
		calls++
		mark, _ := counter.read()
		k, err := r.PublishOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			continue // a horizon still to prove (the first, or a transaction of another test's database running)
		}
		published += k
		trips := counter.since(mark)
		if len(trips) != 2 || !has(trips[0], horizonRead) || !has(trips[0], logRead) ||
			!has(trips[1], cursorUpdate) || !has(trips[1], horizonRead) {
			t.Fatalf("publish %d took %d round trips %q: want 2, the horizon with the read, then the cursor update with the next horizon", published, len(trips), trips)
		}
	}
	if published != n {
		t.Fatalf("published %d events, want %d", published, n)
	}
	if got := len(e.consume(ctx, t, topics.EventsFiat, n)); got != n {
		t.Fatalf("consumed %d events, want %d", got, n)
	}
}
