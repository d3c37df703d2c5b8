package relay_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// roundTrips counts, through pgx's tracer hooks on a real connection, the
// round trips a relay sends outside a transaction block (each is an implicit
// transaction: one commit in pg_stat_database) and its publish loops (each
// checks the lock once).
type roundTrips struct {
	mu    sync.Mutex
	trips int
	loops int
	// cursorAlone and cursorRiding count the cursor updates sent as a
	// round trip of their own and inside a batch.
	cursorAlone, cursorRiding int
}

const lockCheck = "FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
const cursorUpdate = "UPDATE event_log_cursor"

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	if strings.Contains(d.SQL, lockCheck) {
		c.loops++
	}
	if strings.Contains(d.SQL, cursorUpdate) {
		c.cursorAlone++
	}
	return ctx
}

func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	return ctx
}

func (c *roundTrips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(d.SQL, lockCheck) {
		c.loops++
	}
	if strings.Contains(d.SQL, cursorUpdate) {
		c.cursorRiding++
	}
}

func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *roundTrips) read() (trips, loops int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trips, c.loops
}

// tracedRelay runs a relay on a pool of the test's database whose
// connections count their round trips.
func tracedRelay(ctx context.Context, t *testing.T, e *env) *roundTrips {
	t.Helper()
	cfg := e.pool.Config().Copy()
	counter := &roundTrips{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	traced := &env{pool: pool, brokers: e.brokers}
	r := traced.relay(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done; pool.Close() })
	return counter
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
	counter := tracedRelay(ctx, t, e)

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

// TestRelayStoresItsCursorInTheNextLoop: a running leader stores the cursor
// past what it published in its next loop's round trip, never in a
// transaction of its own (which cost a commit and a WAL flush per publish),
// and the stored cursor still reaches every published event.
func TestRelayStoresItsCursorInTheNextLoop(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	counter := tracedRelay(ctx, t, e)
	for i := range 3 {
		if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(i, "")}); err != nil {
			t.Fatal(err)
		}
		last := lastSeq(t, e.pool)
		waitFor(ctx, t, "the cursor passes the event", func() bool { return cursor(t, e.pool) >= last })
	}
	counter.mu.Lock()
	alone, riding := counter.cursorAlone, counter.cursorRiding
	counter.mu.Unlock()
	if alone != 0 || riding == 0 {
		t.Fatalf("cursor updates: %d in a round trip of their own, %d in a loop's round trip: want 0 and at least 1", alone, riding)
	}
	if got := len(e.consume(ctx, t, topics.EventsFiat, 3)); got != 3 {
		t.Fatalf("consumed %d events, want 3", got)
	}
}
