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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/gateway/console"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/dlq"
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
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	brokers := broker.Addrs()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := topics.EnsureTopics(ctx, cl); err != nil {
		t.Fatal(err)
	}

	var broken atomic.Bool
	broken.Store(true)
	const group = "dlq-test-group"
	runner, err := pipeline.NewRunner(pipeline.Config{Group: group, Topics: []string{topics.FiatCommands}, Brokers: brokers},
		pool, flakyApplier{&broken}, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopRunner := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx) }()
	defer func() { stopRunner(); <-done }()

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
	tooling, err := console.NewDLQ(ops, dlq.NewStore(pool), time.Now)
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
	shown, headers, value, err := tooling.Show(ctx, p.ID)
	if err != nil || shown.ID != p.ID || headers["id"] != poison || !strings.Contains(string(value), poison) {
		t.Fatalf("show %s: %+v %v %q, %v", p.ID, shown, headers, value, err)
	}
	var out strings.Builder
	printDLQRecord(&out, shown, headers, value)
	if !strings.Contains(out.String(), string(value)) || !strings.Contains(out.String(), "command "+poison) {
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
	if _, err := tooling.Replay(ctx, p.ID, "admin:test"); !errors.Is(err, console.ErrInvalidState) {
		t.Fatalf("a second replay: %v, want ErrInvalidState", err)
	}
	if err := cmdDLQ(ctx, cfg, []string{"replay", p.ID}); err == nil || !strings.Contains(err.Error(), "already replayed") {
		t.Fatalf("platform dlq replay of a replayed record: %v", err)
	}
	caughtUp()
	if n := applied(poison); n != 1 {
		t.Fatalf("after the refused replays: applied %d times, want 1", n)
	}
	if _, err := tooling.Discard(ctx, p.ID, "admin:test"); !errors.Is(err, console.ErrInvalidState) {
		t.Fatalf("discarding a replayed record: %v, want ErrInvalidState", err)
	}
	for _, id := range []string{"fiat.commands.dlq:0:99", "fiat.commands.dlq:7:0", "nope", "fiat.commands:0:0"} {
		if _, err := tooling.Replay(ctx, id, "admin:test"); !errors.Is(err, console.ErrUnknownRecord) {
			t.Errorf("replay %q: %v, want ErrUnknownRecord", id, err)
		}
	}
	if err := cmdDLQ(ctx, cfg, []string{"replay", "fiat.commands.dlq:0:99"}); err == nil || !strings.Contains(err.Error(), "no parked record") {
		t.Errorf("platform dlq replay of an unknown id: %v", err)
	}

	var audits []string
	rows, err := pool.Query(ctx, `SELECT actor || ' ' || action FROM fiat_audit WHERE subject = $1 ORDER BY created_at`, p.ID)
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
	fresh, err := console.NewDLQ(ops, dlq.NewStore(pool), time.Now)
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
	if got := describeCommand(schemas.DLQRecord{}); got != "a record with no readable command id" {
		t.Errorf("no command id: %q", got)
	}
	if got := describeCommand(schemas.DLQRecord{CommandID: "c1", Type: "fiat.transfer"}); got != "command c1, fiat.transfer" {
		t.Errorf("command: %q", got)
	}
	var out strings.Builder
	printDLQRecord(&out, schemas.DLQRecord{ID: "fiat.commands.dlq:0:1"}, map[string]string{"dlq-error": "bad"}, []byte{0, 1, 0xff})
	if !strings.Contains(out.String(), "00 01 ff") || !strings.Contains(out.String(), `dlq-error: "bad"`) || !strings.Contains(out.String(), "value (3 bytes)") {
		t.Errorf("printed:\n%s", out.String())
	}
}
