package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
	"github.com/fintech/platform/topics/commandbus"
)

// TestRunnerAndRelayFollowTheNewPrimary: the platform connects with a
// multi-host DATABASE_URL and target_session_attrs=read-write. A runner and
// a relay work on the first server; then it is demoted the way a fencing
// failover does it (read-only for every session, the open ones included)
// and the second server becomes the primary. Without a restart the next
// command is applied on the new primary, answered 200 and not parked, and
// the relay publishes the new primary's events. The new primary never had
// the first command (a promotion that lost it): the runner's position
// fence finds no stored position there and applies it again before the
// next one, so the new primary's total holds both.
func TestRunnerAndRelayFollowTheNewPrimary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	old := pgtest.StartServer(t)
	newURL := pgtest.ServerURL()
	name := "fo_" + strings.ToLower(ksuid.New().String())
	oldURL := old.URL(name)
	exec := func(url, sql string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	adminOf := func(url string) string { return strings.Replace(url, "/"+name+"?", "/postgres?", 1) }
	newDB := withDB(t, newURL, name)
	for _, url := range []string{oldURL, newDB} {
		exec(adminOf(url), `CREATE DATABASE `+name)
		pool, err := postgres.Connect(ctx, url, 4)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := postgres.Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `CREATE TABLE test_counter (total bigint NOT NULL); INSERT INTO test_counter VALUES (0)`); err != nil {
			t.Fatal(err)
		}
		pool.Close()
	}
	t.Cleanup(func() { exec(adminOf(newDB), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	// The second server is a standby for now: read-only.
	exec(adminOf(newDB), `ALTER DATABASE `+name+` SET default_transaction_read_only = on`)

	hostPort := func(url string) string {
		return strings.SplitN(strings.TrimPrefix(url, "postgres://postgres@"), "/", 2)[0]
	}
	dsn := fmt.Sprintf("postgres://postgres@%s,%s/%s?sslmode=disable&target_session_attrs=read-write",
		hostPort(oldURL), hostPort(newDB), name)
	pool, err := postgres.Connect(ctx, dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	brokers := b.Addrs()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commandbus.New(ctx, brokers, 30*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	r := newRunnerOf(t, counterHandler{}, pool, brokers, nil)
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rl := relay.New(pool, topics.NewProducer(cl), prometheus.NewRegistry(), log, relay.WithCampaignInterval(50*time.Millisecond))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- r.Run(runCtx) }()
	go func() { done <- rl.Run(runCtx) }()
	defer func() { stop(); <-done; <-done }()

	send := func(id string, amount int64, url string, want int64) {
		t.Helper()
		rep, err := bus.Send(ctx, command(t, id, amount))
		if err != nil || rep.Status != 200 {
			t.Fatalf("%s: %+v %v, want 200", id, rep, err)
		}
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var got int64
		if err := c.QueryRow(ctx, `SELECT total FROM test_counter`).Scan(&got); err != nil || got != want {
			t.Fatalf("%s: total %d on %s (%v), want %d", id, got, url, err, want)
		}
	}
	send("before", 3, oldURL, 3)
	event := func(url, id string) {
		t.Helper()
		p, err := postgres.Connect(ctx, url, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := pipeline.InsertOutbox(ctx, p, []pipeline.OutboxRow{{Topic: topics.EventsFiat, Key: "k", Type: "test",
			EventID: id, Payload: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	event(oldURL, "ev-old")
	waitEvents(ctx, t, brokers, "ev-old")

	// Failover: the old primary is fenced (every session read-only, the
	// pool's open ones too), the standby promoted.
	exec(adminOf(oldURL), `ALTER SYSTEM SET default_transaction_read_only = on`)
	exec(adminOf(oldURL), `SELECT pg_reload_conf()`)
	exec(adminOf(newDB), `ALTER DATABASE `+name+` RESET default_transaction_read_only`)

	send("after", 4, newDB, 7)
	event(newDB, "ev-new")
	waitEvents(ctx, t, brokers, "ev-new")
	ends, err := topics.EndOffsets(ctx, cl, topics.DLQ(topics.FiatCommands))
	if err != nil {
		t.Fatal(err)
	}
	for p, end := range ends {
		if end != 0 {
			t.Fatalf("the DLQ holds %d records on partition %d, want none", end, p)
		}
	}
}

// waitEvents waits until events.fiat carries an event with id.
func waitEvents(ctx context.Context, t *testing.T, brokers []string, id string) {
	t.Helper()
	c, err := topics.NewClient(brokers, kgoConsume(topics.EventsFiat)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for ctx.Err() == nil {
		for _, rec := range c.PollFetches(ctx).Records() {
			if topics.Header(rec, "id") == id {
				return
			}
		}
	}
	t.Fatalf("event %s was never published", id)
}

// withDB is url with its database replaced by name.
func withDB(t *testing.T, url, name string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(url, "/"+cfg.Database+"?", "/"+name+"?", 1)
}
