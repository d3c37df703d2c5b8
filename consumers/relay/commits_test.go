package relay_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// roundTrips counts, through pgx's tracer hooks on a real connection, the
// round trips a relay sends outside a transaction block (each is an implicit
// transaction: one commit in pg_stat_database) and its publish loops (each
// checks the lock once).
type roundTrips struct {
	mu    sync.Mutex
	trips int
	loops int
}

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	if strings.Contains(d.SQL, "FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()") {
		c.loops++
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
	if strings.Contains(d.SQL, "FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()") {
		c.loops++
	}
}

func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *roundTrips) read() (trips, loops int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trips, c.loops
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
	cfg := e.pool.Config().Copy()
	counter := &roundTrips{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e.pool = pool
	r := e.relay(t)
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
