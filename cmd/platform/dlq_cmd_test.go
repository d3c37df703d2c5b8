package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/gateway/dlq"
	"github.com/fintech/platform/schemas"
	dlqstore "github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// flakyApplier records every application of a command in a row of its
// own, so applying one twice shows; while broken, it panics on commands
// keyed "poison", as a handler bug would.
type flakyApplier struct{ broken *atomic.Bool }

func (h flakyApplier) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	out := make([]pipeline.Outcome, len(cmds))
	for i, c := range cmds {
		if h.broken.Load() && c.Env.Key == "poison" {
			panic("applier bug: cannot apply " + c.Env.ID)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO dlq_test_applied (command_id) VALUES ($1)`, c.Env.ID); err != nil {
			return nil, err
		}
		out[i] = pipeline.JSON(200, map[string]string{"applied": c.Env.ID})
	}
	return out, nil
}

// TestDLQReplayAppliesOnce parks a command (the applier panics on it),
// fixes the applier, replays the command with `platform dlq replay`, and
// sees it applied exactly once; a second replay is refused (API and CLI),
// an unknown id is refused, and the one replay is in the audit log.
// startFlakyRunner starts an embedded broker with the platform's topics and
// a runner of group on fiat.commands applying with flakyApplier, broken at
// first; everything stops when the test ends.
func startFlakyRunner(t *testing.T, ctx context.Context, pool *pgxpool.Pool, group string) ([]string, *kgo.Client, *atomic.Bool) {
	t.Helper()
	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	brokers := b.Addrs()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if err := topics.EnsureTopics(ctx, cl); err != nil {
		t.Fatal(err)
	}
	broken := &atomic.Bool{}
	broken.Store(true)
	runner, err := pipeline.NewRunner(pipeline.Config{Group: group, Topics: []string{topics.FiatCommands}, Brokers: brokers},
		pool, flakyApplier{broken}, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopRunner := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx) }()
	t.Cleanup(func() { stopRunner(); <-done })
	return brokers, cl, broken
}

func TestDLQReplayAppliesOnce(t *testing.T) {
	pool, dbURL := pgtest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE dlq_test_applied (command_id text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const group = "dlq-test-group"
	brokers, cl, broken := startFlakyRunner(t, ctx, pool, group)

	publish := func(key string) string {
		t.Helper()
		env, err := schemas.New("user.registered", key, "user-1", map[string]string{"note": key}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		rec, err := topics.Record(topics.FiatCommands, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
		return env.ID
	}
	applied := func(id string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM dlq_test_applied WHERE command_id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	caughtUp := func() {
		t.Helper()
		for {
			lag, err := topics.Lag(ctx, cl, group, topics.FiatCommands)
			if err == nil && lag == 0 {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("group did not catch up: lag %d, %v", lag, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	ops, err := topics.NewOps(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	tooling, err := dlq.New(ops, dlqstore.NewStore(pool), time.Now)
	if err != nil {
		t.Fatal(err)
	}

	good := publish("fine")
	poison := publish("poison")
	var parked []schemas.DLQRecord
	for len(parked) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the poison command was never parked")
		}
		parked, err = tooling.List(ctx, topics.FiatCommands, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	caughtUp()
	p := parked[0]
	if len(parked) != 1 || p.CommandID != poison || p.Key != "poison" || p.State != schemas.DLQStateParked ||
		p.SourceTopic != topics.FiatCommands || !strings.Contains(p.Error, "applier bug") || p.FirstSeenAt.IsZero() {
		t.Fatalf("parked %+v, want the poison command %s with its error", parked, poison)
	}
	if applied(good) != 1 || applied(poison) != 0 {
		t.Fatalf("before the fix: good applied %d times, poison %d, want 1 and 0", applied(good), applied(poison))
	}

	// `dlq show` prints the record's bytes: the envelope of the command.
	shown, err := tooling.Show(ctx, p.ID)
	if err != nil || shown.Record.ID != p.ID || shown.Headers["id"] != poison || !strings.Contains(string(shown.Value), poison) {
		t.Fatalf("show %s: %+v, %v", p.ID, shown, err)
	}
	var out strings.Builder
	printDLQRecord(&out, shown)
	if !strings.Contains(out.String(), string(shown.Value)) || !strings.Contains(out.String(), "command "+poison) {
		t.Fatalf("dlq show printed:\n%s", out.String())
	}

	// The fix is deployed; the operator replays from a shell.
	broken.Store(false)
	cfg := Config{DatabaseURL: dbURL, KafkaBrokers: brokers}
	if err := cmdDLQ(ctx, cfg, []string{"replay", p.ID}); err != nil {
		t.Fatalf("platform dlq replay: %v", err)
	}
	for applied(poison) == 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	caughtUp()
	if n := applied(poison); n != 1 {
		t.Fatalf("after the replay the command was applied %d times, want 1", n)
	}

	// A record is replayed once: a second replay is refused, from the API
	// and from the shell, and publishes nothing.
	if _, err := tooling.Replay(ctx, p.ID, "admin:test"); !errors.Is(err, dlq.ErrInvalidState) {
		t.Fatalf("a second replay: %v, want ErrInvalidState", err)
	}
	if err := cmdDLQ(ctx, cfg, []string{"replay", p.ID}); err == nil || !strings.Contains(err.Error(), "already replayed") {
		t.Fatalf("platform dlq replay of a replayed record: %v", err)
	}
	caughtUp()
	if n := applied(poison); n != 1 {
		t.Fatalf("after the refused replays: applied %d times, want 1", n)
	}
	if _, err := tooling.Discard(ctx, p.ID, "admin:test"); !errors.Is(err, dlq.ErrInvalidState) {
		t.Fatalf("discarding a replayed record: %v, want ErrInvalidState", err)
	}
	for _, id := range []string{"fiat.commands.dlq:0:99", "fiat.commands.dlq:7:0", "nope", "fiat.commands:0:0"} {
		if _, err := tooling.Replay(ctx, id, "admin:test"); !errors.Is(err, dlq.ErrUnknownRecord) {
			t.Errorf("replay %q: %v, want ErrUnknownRecord", id, err)
		}
	}
	if err := cmdDLQ(ctx, cfg, []string{"replay", "fiat.commands.dlq:0:99"}); err == nil || !strings.Contains(err.Error(), "no parked record") {
		t.Errorf("platform dlq replay of an unknown id: %v", err)
	}

	var audits []string
	rows, err := pool.Query(ctx, `SELECT actor || ' ' || action FROM dlq_audit WHERE record_id = $1 ORDER BY created_at`, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	audits, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(audits) != 1 || !strings.HasPrefix(audits[0], "cli") || !strings.HasSuffix(audits[0], "dlq.replay") {
		t.Errorf("audit rows %q, want the CLI's one replay", audits)
	}
	// A fresh tooling (as after a restart) finds the decision: it is in
	// Postgres, the record at its offset on the broker.
	fresh, err := dlq.New(ops, dlqstore.NewStore(pool), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	list, err := fresh.List(ctx, "", "", 10)
	if err != nil || len(list) != 1 || list[0].State != schemas.DLQStateReplayed {
		t.Fatalf("list after the replays: %+v, %v", list, err)
	}
}

// TestDLQPrinting: a record without a readable command id is said to have
// none (not "(command )"), and bytes that are not text are dumped in hex.
func TestDLQPrinting(t *testing.T) {
	t.Parallel()
	if got := dlq.Describe(schemas.DLQRecord{}); got != "a record with no readable command id" {
		t.Errorf("no command id: %q", got)
	}
	if got := dlq.Describe(schemas.DLQRecord{CommandID: "c1", Type: "fiat.transfer"}); got != "command c1, fiat.transfer" {
		t.Errorf("command: %q", got)
	}
	if got := dlq.Describe(schemas.DLQRecord{CommandID: "c1", ReplayOf: "fiat.commands.dlq:0:3"}); got != "command c1, replay of fiat.commands.dlq:0:3" {
		t.Errorf("replay: %q", got)
	}
	var out strings.Builder
	printDLQRecord(&out, dlq.Shown{Record: schemas.DLQRecord{ID: "fiat.commands.dlq:0:1"}, Headers: map[string]string{"dlq-error": "bad"}, Value: []byte{0, 1, 0xff}})
	if !strings.Contains(out.String(), "00 01 ff") || !strings.Contains(out.String(), `dlq-error: "bad"`) || !strings.Contains(out.String(), "value (3 bytes)") {
		t.Errorf("printed:\n%s", out.String())
	}
}

// TestDLQReplayStillBadIsLinked replays, with `platform dlq replay`, three
// records that are still bad: a command whose applier still panics (parked
// again from its envelope), a record of a type this build cannot read and
// bytes that are no envelope at all (both parked again as they came,
// headers and all). Each new parked record names
// the one it replays, in the tooling's list and in `platform dlq list` and
// `show`; `platform dlq discard` of the new one prints its command and
// link, not "(command )"; and the decisions are in dlq_audit.
func TestDLQReplayStillBadIsLinked(t *testing.T) {
	pool, dbURL := pgtest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, `CREATE TABLE dlq_test_applied (command_id text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	brokers, cl, _ := startFlakyRunner(t, ctx, pool, "dlq-link-group")

	ops, err := topics.NewOps(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	tooling, err := dlq.New(ops, dlqstore.NewStore(pool), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	// parkedOf waits until the DLQ holds n records keyed key.
	parkedOf := func(key string, n int) []schemas.DLQRecord {
		t.Helper()
		for {
			all, err := tooling.List(ctx, topics.FiatCommands, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			var mine []schemas.DLQRecord
			for _, r := range all {
				if r.Key == key {
					mine = append(mine, r)
				}
			}
			if len(mine) >= n {
				return mine
			}
			if ctx.Err() != nil {
				t.Fatalf("%s parked %d times, want %d", key, len(mine), n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	env, err := schemas.New("user.registered", "poison", "user-1", map[string]string{"note": "still bad"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := topics.Record(topics.FiatCommands, env)
	if err != nil {
		t.Fatal(err)
	}
	futureID := schemas.NewID()
	future := topics.RawRecord(topics.FiatCommands, "future", "fiat.future_command", futureID,
		[]byte(`{"id":"`+futureID+`","type":"fiat.future_command","schemaVersion":1,"key":"future","data":{}}`))
	garbage := &kgo.Record{Topic: topics.FiatCommands, Key: []byte("garbage"), Value: []byte("not an envelope")}
	if err := cl.ProduceSync(ctx, rec, future, garbage).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cfg := Config{DatabaseURL: dbURL, KafkaBrokers: brokers}
	for _, tt := range []struct{ key, command string }{
		{"poison", "command " + env.ID + ", user.registered"},
		{"future", "command " + futureID + ", fiat.future_command"},
		{"garbage", "a record with no readable command id"},
	} {
		old := parkedOf(tt.key, 1)[0]
		if old.ReplayOf != "" {
			t.Fatalf("a first parking names a replay: %+v", old)
		}
		if err := runDLQ(ctx, cfg, []string{"replay", old.ID}, io.Discard); err != nil {
			t.Fatalf("platform dlq replay %s: %v", old.ID, err)
		}
		both := parkedOf(tt.key, 2)
		if len(both) != 2 || both[0].ID != old.ID || both[0].State != schemas.DLQStateReplayed || both[0].ReplayOf != "" {
			t.Fatalf("after the replay of %s: %+v", old.ID, both)
		}
		again := both[1]
		if again.ReplayOf != old.ID || again.State != schemas.DLQStateParked {
			t.Fatalf("%s parked again as %+v: want it to name %s", tt.key, again, old.ID)
		}

		var out strings.Builder
		if err := runDLQ(ctx, cfg, []string{"list", "-topic", topics.FiatCommands}, &out); err != nil {
			t.Fatal(err)
		}
		if !lineWith(out.String(), again.ID, old.ID) {
			t.Errorf("platform dlq list does not link %s to %s:\n%s", again.ID, old.ID, out.String())
		}
		out.Reset()
		if err := runDLQ(ctx, cfg, []string{"show", again.ID}, &out); err != nil || !strings.Contains(out.String(), "replay of "+old.ID) {
			t.Errorf("platform dlq show %s (%v):\n%s", again.ID, err, out.String())
		}
		out.Reset()
		if err := runDLQ(ctx, cfg, []string{"show", old.ID}, &out); err != nil || !strings.Contains(out.String(), "dlq.replay by cli") {
			t.Errorf("platform dlq show %s prints no decision (%v):\n%s", old.ID, err, out.String())
		}
		out.Reset()
		if err := runDLQ(ctx, cfg, []string{"discard", again.ID}, &out); err != nil {
			t.Fatal(err)
		}
		if want := "discarded " + again.ID + " (" + tt.command + ", replay of " + old.ID + ")\n"; out.String() != want {
			t.Errorf("platform dlq discard printed %q, want %q", out.String(), want)
		}
	}
	var audited int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM dlq_audit`).Scan(&audited); err != nil || audited != 6 {
		t.Errorf("dlq_audit holds %d rows (%v), want 3 replays and 3 discards", audited, err)
	}
}

// lineWith reports whether one line of s holds every one of subs.
func lineWith(s string, subs ...string) bool {
	for _, line := range strings.Split(s, "\n") {
		all := true
		for _, sub := range subs {
			all = all && strings.Contains(line, sub)
		}
		if all {
			return true
		}
	}
	return false
}
