package relay_test

import (
	"context"
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics/broker"
)

// idleFor is how long TestIdleRelayTakesNoXids watches an idle relay;
// `-args -relay.idle=1m` measures xids per idle minute.
var idleFor = flag.Duration("relay.idle", 3*time.Second, "how long TestIdleRelayTakesNoXids watches the idle relay")

// TestIdleRelayTakesNoXids: a leader with nothing to publish takes no xid
// (issue 43: one per idle loop, ~50 a second, wrapping the xid space for
// nothing and forcing anti-wraparound vacuums). Xids are counted on a server
// of the test's own, with autovacuum off, so nothing else takes any: the next
// xid, read without taking one, before and after the idle loops.
func TestIdleRelayTakesNoXids(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), *idleFor+90*time.Second)
	defer cancel()
	srv := pgtest.StartServerWith(t, pgtest.ServerOptions{Settings: func(*pgtest.Server) string { return "autovacuum = off\n" }})
	name := "idle_" + strings.ToLower(ksuid.New().String())
	admin, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	plain, err := postgres.Connect(ctx, srv.URL(name), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := postgres.Migrate(ctx, plain); err != nil {
		t.Fatal(err)
	}
	cfg := plain.Config().Copy()
	counter := &roundTrips{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e := &env{pool: pool, brokers: b.Addrs()}

	// One event, so the relay has proven a horizon, published and stored a
	// cursor before it idles.
	if err := pipeline.InsertOutbox(ctx, plain, []pipeline.OutboxRow{row(0, "")}); err != nil {
		t.Fatal(err)
	}
	r := e.relay(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()
	waitFor(ctx, t, "the event is published", func() bool { return cursor(t, plain) >= 1 })
	_, l := counter.read()
	waitFor(ctx, t, "three more loops", func() bool { _, n := counter.read(); return n >= l+3 })

	nextXid := func() uint64 {
		t.Helper()
		var s string
		if err := admin.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	_, loops0 := counter.read()
	xid0, start := nextXid(), time.Now()
	time.Sleep(*idleFor)
	_, loops1 := counter.read()
	xid1, took := nextXid(), time.Since(start)
	xids, loops := xid1-xid0, loops1-loops0
	t.Logf("idle relay: %d xids in %d loops over %v (%.0f xids per idle minute)",
		xids, loops, took.Round(time.Millisecond), float64(xids)/took.Minutes())
	if loops < 10 {
		t.Fatalf("only %d loops in %v: the relay is not looping", loops, took)
	}
	if xids != 0 {
		t.Fatalf("the idle relay took %d xids in %d loops over %v, want none", xids, loops, took.Round(time.Millisecond))
	}
}
