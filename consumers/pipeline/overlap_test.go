package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/commandbus"
)

// stepHandler is a pipelined handler that adds each command's amount to the
// counter row (locked by Load) and records (key, seq) in application order.
// A command with Gate also updates the test_gate row, which the test holds
// locked to keep a batch in its commit round trip while the next batch
// starts. It counts how often each command id was handed to it to apply.
type stepHandler struct {
	mu      sync.Mutex
	decided map[string]int
}

type stepData struct {
	Amount int64 `json:"amount"`
	Seq    int   `json:"seq"`
	Gate   bool  `json:"gate,omitempty"`
}

type stepLoaded struct {
	h     *stepHandler
	total int64
}

func (h *stepHandler) Load(_ []pipeline.Command, b *pgx.Batch) pipeline.Loaded {
	l := &stepLoaded{h: h}
	b.Queue(`SELECT total FROM test_counter FOR UPDATE`).QueryRow(func(row pgx.Row) error { return row.Scan(&l.total) })
	return l
}

func (l *stepLoaded) Decide(_ context.Context, fresh []pipeline.Command, b *pgx.Batch) ([]pipeline.Outcome, error) {
	out := make([]pipeline.Outcome, len(fresh))
	for i, c := range fresh {
		d, err := schemas.DataAs[stepData](c.Env)
		if err != nil {
			return nil, err
		}
		l.h.mu.Lock()
		l.h.decided[c.Env.ID]++
		l.h.mu.Unlock()
		l.total += d.Amount
		b.Queue(`INSERT INTO test_order (key, seq) VALUES ($1, $2)`, c.Env.Key, d.Seq)
		if d.Gate {
			b.Queue(`UPDATE test_gate SET n = n + 1`)
		}
		out[i] = pipeline.JSON(200, map[string]int64{"total": l.total})
	}
	b.Queue(`UPDATE test_counter SET total = $1`, l.total)
	return out, nil
}

func (h *stepHandler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	reads := &pgx.Batch{}
	l := h.Load(cmds, reads)
	if err := tx.SendBatch(ctx, reads).Close(); err != nil {
		return nil, err
	}
	writes := &pgx.Batch{}
	out, err := l.Decide(ctx, cmds, writes)
	if err != nil {
		return nil, err
	}
	return out, tx.SendBatch(ctx, writes).Close()
}

func (h *stepHandler) timesDecided(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.decided[id]
}

// overlapFixture is a running overlapped runner of a stepHandler, with the
// gate row held by the test.
type overlapFixture struct {
	pool    *pgxpool.Pool
	brokers []string
	cl      *kgo.Client
	h       *stepHandler
	metrics *pipeline.Metrics
	gate    pgx.Tx
}

func newOverlapFixture(t *testing.T, ctx context.Context) *overlapFixture {
	t.Helper()
	pool, brokers := setup(t)
	if _, err := pool.Exec(ctx, `
CREATE TABLE test_order (id bigserial PRIMARY KEY, key text NOT NULL, seq int NOT NULL);
CREATE TABLE test_gate (n int NOT NULL); INSERT INTO test_gate VALUES (0)`); err != nil {
		t.Fatal(err)
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	f := &overlapFixture{pool: pool, brokers: brokers, cl: cl, h: &stepHandler{decided: map[string]int{}},
		metrics: pipeline.NewMetrics(prometheus.NewRegistry())}
	f.gate, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.gate.Rollback(context.Background()) })
	if _, err := f.gate.Exec(ctx, `SELECT n FROM test_gate FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	return f
}

// run starts the runner; the returned function stops it and checks it
// stopped cleanly.
func (f *overlapFixture) run(t *testing.T, ctx context.Context) func() {
	t.Helper()
	r, err := pipeline.NewRunner(pipeline.Config{Group: "test-group", Topics: []string{topics.FiatCommands}, Brokers: f.brokers,
		Overlap: pipeline.OverlapAlways},
		f.pool, f.h, f.metrics, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	return func() {
		t.Helper()
		stop()
		if err := <-done; err != nil {
			t.Fatalf("runner: %v", err)
		}
	}
}

// openGate lets the batch waiting on the gate row commit.
func (f *overlapFixture) openGate(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := f.gate.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// redone reads platform_consumer_redone_total of the test group.
func (f *overlapFixture) redone(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := f.metrics.Redone.WithLabelValues("test-group").Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func step(t *testing.T, id string, seq int, amount int64, gate bool) commandbus.Command {
	t.Helper()
	env, err := schemas.New(testType, "wallet-1", "user-1", stepData{Amount: amount, Seq: seq, Gate: gate}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env.ID = id
	env.RequestHash = "h"
	return commandbus.Command{Topic: topics.FiatCommands, Env: env}
}

// publishTogether produces cmds in one request, so that one poll reads
// them all.
func publishTogether(t *testing.T, ctx context.Context, cl *kgo.Client, cmds []commandbus.Command) {
	t.Helper()
	recs := make([]*kgo.Record, len(cmds))
	for i, c := range cmds {
		rec, err := topics.Record(c.Topic, c.Env)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = rec
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// lockWaiters counts this database's sessions waiting for a lock: a batch
// held by the gate row, and a batch queued behind it.
func lockWaiters(t *testing.T, ctx context.Context, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// appliedSeqs lists the seqs of test_order in application order.
func appliedSeqs(t *testing.T, ctx context.Context, pool *pgxpool.Pool) []int {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT seq FROM test_order ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

// overlapTwoBatches publishes first (batch N, its first command waiting on
// the gate row in its commit round trip) and, once N waits there, then
// (batch N+1), and waits until N+1 is waiting too: queued behind N.
func (f *overlapFixture) overlapTwoBatches(t *testing.T, ctx context.Context, first, then []commandbus.Command) func() {
	t.Helper()
	publishTogether(t, ctx, f.cl, first)
	stop := f.run(t, ctx)
	waitFor(t, ctx, "batch N waits on the gate", func() bool { return lockWaiters(t, ctx, f.pool) >= 1 })
	publishTogether(t, ctx, f.cl, then)
	waitFor(t, ctx, "batch N+1 waits behind batch N", func() bool { return lockWaiters(t, ctx, f.pool) >= 2 })
	return stop
}

// TestCommandInTwoOverlappedBatchesIsAppliedOnce: a command redelivered in
// batch N+1 while batch N, which holds it, commits. N+1's "applied
// before?" lookup runs only after N committed (the order lock), so the
// command is answered from its record, never handed to the handler again.
// Without the lock N+1 reads before N commits and applies it a second time
// (that transaction then fails on processed_commands and is retried).
func TestCommandInTwoOverlappedBatchesIsAppliedOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newOverlapFixture(t, ctx)
	stop := f.overlapTwoBatches(t, ctx,
		[]commandbus.Command{step(t, "first", 1, 1, true), step(t, "dup", 2, 10, false)},
		[]commandbus.Command{step(t, "dup", 2, 10, false), step(t, "second", 3, 100, false)})
	f.openGate(t, ctx)
	waitDrained(t, ctx, f.cl, "test-group")
	stop()

	if n := f.h.timesDecided("dup"); n != 1 {
		t.Errorf("the command in both batches was applied %d times, want 1", n)
	}
	if got := total(t, f.pool); got != 111 {
		t.Errorf("total = %d, want 111", got)
	}
	if seqs := appliedSeqs(t, ctx, f.pool); fmt.Sprint(seqs) != "[1 2 3]" {
		t.Errorf("applied %v, want [1 2 3]", seqs)
	}
	if n := f.redone(t); n != 0 {
		t.Errorf("%v batches redone, want 0", n)
	}
}

// TestFailedBatchRollsBackTheOverlappedOne: batch N loses its connection in
// its commit round trip while N+1 waits behind it. N+1 must not commit
// before N: it is rolled back, and both are applied again in order, each
// command once.
func TestFailedBatchRollsBackTheOverlappedOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newOverlapFixture(t, ctx)
	stop := f.overlapTwoBatches(t, ctx,
		[]commandbus.Command{step(t, "a1", 1, 1, true), step(t, "a2", 2, 10, false)},
		[]commandbus.Command{step(t, "b1", 3, 100, false), step(t, "b2", 4, 1000, false)})

	var killed int
	if err := f.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE test_gate%'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d sessions of batch N (%v), want 1", killed, err)
	}
	// N+1 now holds the lock: it must roll back, not commit. Then N's retry
	// waits on the gate again.
	redone := func() float64 { return f.redone(t) }
	waitFor(t, ctx, "batch N+1 is rolled back or committed", func() bool {
		var n int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM test_order`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return redone() >= 1 || n > 0
	})
	f.openGate(t, ctx)
	waitDrained(t, ctx, f.cl, "test-group")
	stop()

	if seqs := appliedSeqs(t, ctx, f.pool); fmt.Sprint(seqs) != "[1 2 3 4]" {
		t.Errorf("applied %v, want [1 2 3 4]: N+1 committed before N", seqs)
	}
	if got := total(t, f.pool); got != 1111 {
		t.Errorf("total = %d, want 1111", got)
	}
	// The producer may send b2 apart from b1, so b2 can come in a batch of
	// its own that never starts before N is finished.
	if n := redone(); n < 1 || n > 2 {
		t.Errorf("%v batches redone, want 1 or 2", n)
	}
	if n := f.h.timesDecided("b1"); n != 2 {
		t.Errorf("b1 was decided %d times, want 2 (rolled back once, then applied)", n)
	}
	if n := f.h.timesDecided("b2"); n < 1 || n > 2 {
		t.Errorf("b2 was decided %d times, want 1 or 2", n)
	}
}

// TestOverlappedBatchesKeepOrder: commands of one key, spread over batches
// that overlap (each one queued behind the one committing), are applied
// in the order they were produced.
func TestOverlappedBatchesKeepOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newOverlapFixture(t, ctx)
	const bursts, per = 20, 15
	seq := 0
	burst := func(gate bool) []commandbus.Command {
		var cmds []commandbus.Command
		for range per {
			seq++
			cmds = append(cmds, step(t, fmt.Sprintf("s-%d", seq), seq, 1, gate && len(cmds) == 0))
		}
		return cmds
	}
	stop := f.overlapTwoBatches(t, ctx, burst(true), burst(false))
	f.openGate(t, ctx)
	for range bursts - 2 {
		// Asynchronous, so that bursts arrive while batches commit.
		for _, c := range burst(false) {
			rec, err := topics.Record(c.Topic, c.Env)
			if err != nil {
				t.Fatal(err)
			}
			f.cl.Produce(ctx, rec, nil)
		}
	}
	if err := f.cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, ctx, f.cl, "test-group")
	stop()

	seqs := appliedSeqs(t, ctx, f.pool)
	if len(seqs) != bursts*per {
		t.Fatalf("applied %d commands, want %d", len(seqs), bursts*per)
	}
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("command %d applied at position %d: %v", s, i+1, seqs)
		}
	}
	if got := total(t, f.pool); got != bursts*per {
		t.Errorf("total = %d, want %d", got, bursts*per)
	}
}

// TestBacklogOverlaps: with the default Overlap, a runner behind by many
// batches (MaxBatch caps each poll) overlaps them, and still applies one
// key's commands once each, in order.
func TestBacklogOverlaps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pool, brokers := setup(t)
	if _, err := pool.Exec(ctx, `CREATE TABLE test_order (id bigserial PRIMARY KEY, key text NOT NULL, seq int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 400
	cmds := make([]commandbus.Command, n)
	for i := range cmds {
		cmds[i] = step(t, fmt.Sprintf("b-%d", i+1), i+1, 1, false)
	}
	publishTogether(t, ctx, cl, cmds)

	h := &stepHandler{decided: map[string]int{}}
	metrics := pipeline.NewMetrics(prometheus.NewRegistry())
	r, err := pipeline.NewRunner(pipeline.Config{Group: "test-group", Topics: []string{topics.FiatCommands}, Brokers: brokers, MaxBatch: 25},
		pool, h, metrics, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	waitDrained(t, ctx, cl, "test-group")
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	seqs := appliedSeqs(t, ctx, pool)
	if len(seqs) != n {
		t.Fatalf("applied %d commands, want %d", len(seqs), n)
	}
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("command %d applied at position %d", s, i+1)
		}
	}
	for _, c := range cmds {
		if k := h.timesDecided(c.Env.ID); k != 1 {
			t.Fatalf("%s applied %d times", c.Env.ID, k)
		}
	}
	var m dto.Metric
	if err := metrics.Overlapped.WithLabelValues("test-group").Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.GetCounter().GetValue() == 0 {
		t.Fatal("no batch of the backlog overlapped the one before")
	}
}
