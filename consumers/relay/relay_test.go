package relay_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

type env struct {
	pool    *pgxpool.Pool
	brokers []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	return &env{pool: pool, brokers: broker.Addrs()}
}

func (e *env) relay(t *testing.T, opts ...relay.Option) *relay.Relay {
	t.Helper()
	cl, err := topics.NewClient(e.brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return relay.New(e.pool, topics.NewProducer(cl), prometheus.NewRegistry(),
		slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
}

// consume reads want records of topic from the start, failing on timeout.
func (e *env) consume(ctx context.Context, t *testing.T, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := topics.NewClient(e.brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < want && ctx.Err() == nil {
		got = append(got, cl.PollFetches(ctx).Records()...)
	}
	if len(got) != want {
		t.Fatalf("consumed %d records of %s, want %d", len(got), topic, want)
	}
	return got
}

func row(i int, pad string) pipeline.OutboxRow {
	return pipeline.OutboxRow{Topic: topics.EventsFiat, Key: fmt.Sprintf("k%d", i%3), Type: "test",
		EventID: fmt.Sprintf("e%05d", i), Payload: []byte(fmt.Sprintf(`{"seq":%d,"pad":%q}`, i, pad))}
}

func cursor(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	c, err := pipeline.LogCursor(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drain runs PublishOnce until the cursor reaches seq, returning the events
// sent.
func drain(ctx context.Context, t *testing.T, r *relay.Relay, pool *pgxpool.Pool, seq int64) int {
	t.Helper()
	sent := 0
	for cursor(t, pool) < seq {
		if ctx.Err() != nil {
			t.Fatalf("cursor stuck at %d, want %d", cursor(t, pool), seq)
		}
		k, err := r.PublishOnce(ctx)
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		sent += k
	}
	return sent
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func lastSeq(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var s int64
	if err := pool.QueryRow(context.Background(), `SELECT max(seq) FROM event_log`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRelayPublishesLargeBacklogInOrder queues more and larger events than
// fit in one Kafka batch (1,500 x 2 KB, over many log rows): all arrive, in
// log order per key, and the cursor ends on the last row.
func TestRelayPublishesLargeBacklogInOrder(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const n = 1500
	pad := strings.Repeat("x", 2000)
	for start := 0; start < n; start += 7 {
		var rows []pipeline.OutboxRow
		for i := start; i < min(start+7, n); i++ {
			rows = append(rows, row(i, pad))
		}
		if err := pipeline.InsertOutbox(ctx, e.pool, rows); err != nil {
			t.Fatal(err)
		}
	}
	r := e.relay(t)
	if sent := drain(ctx, t, r, e.pool, lastSeq(t, e.pool)); sent != n {
		t.Fatalf("sent %d events, want %d", sent, n)
	}
	last := map[string]string{}
	for _, rec := range e.consume(ctx, t, topics.EventsFiat, n) {
		id := topics.Header(rec, "id")
		if prev := last[string(rec.Key)]; prev != "" && id <= prev {
			t.Errorf("key %s: %s after %s", rec.Key, id, prev)
		}
		last[string(rec.Key)] = id
	}
	// Nothing was deleted: the log is append-only.
	var events int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&events); err != nil || events != n {
		t.Fatalf("log holds %d events (err %v), want %d", events, err, n)
	}
	// Rows large enough to be compressed are compressed with lz4 (0133):
	// pglz cost over three times as much per insert.
	var method string
	if err := e.pool.QueryRow(ctx, `SELECT coalesce(pg_column_compression(payloads), 'none') FROM event_log ORDER BY seq LIMIT 1`).Scan(&method); err != nil || method != "lz4" {
		t.Fatalf("event_log payloads compressed with %q (err %v), want lz4", method, err)
	}
}

// TestRelayDoesNotSkipSlowTransactionsLowerSeq: transaction A takes its xid
// first, B takes seq s, A takes seq s+1 and commits while B is still open. A's
// own xid is below B's, hence below the xmin B holds (a per-row xid check
// would publish it and move past s), yet the relay must hold: once B
// commits, s and then s+1 are published, none skipped.
func TestRelayDoesNotSkipSlowTransactionsLowerSeq(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := e.relay(t)

	a, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Rollback(ctx) }()
	if _, err := a.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	b, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Rollback(ctx) }()
	if err := pipeline.InsertOutbox(ctx, b, []pipeline.OutboxRow{row(0, "slow")}); err != nil {
		t.Fatal(err)
	}
	if err := pipeline.InsertOutbox(ctx, a, []pipeline.OutboxRow{row(1, "fast")}); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The case a per-row "xid < xmin" check gets wrong: A's xid is older
	// than B's (so once nothing older runs, xmin is B's xid and A's row
	// passes) while A's seq is the higher one.
	var aSeq int64
	var aXid, bXid string
	if err := e.pool.QueryRow(ctx, `SELECT seq, xid::text FROM event_log`).Scan(&aSeq, &aXid); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&bXid); err != nil {
		t.Fatal(err)
	}
	if ax, bx := mustUint(t, aXid), mustUint(t, bXid); aSeq != 2 || ax >= bx {
		t.Fatalf("setup: A has seq %d xid %d, B xid %d; want seq 2 and A's xid below B's", aSeq, ax, bx)
	}

	// Many rounds, far more than an idle horizon needs (two): nothing moves.
	for i := 0; i < 20; i++ {
		k, err := r.PublishOnce(ctx)
		if err != nil || k != 0 {
			t.Fatalf("round %d: published %d (err %v) while a lower seq is open", i, k, err)
		}
	}
	if c := cursor(t, e.pool); c != 0 {
		t.Fatalf("cursor moved to %d while seq %d is uncommitted", c, aSeq-1)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if sent := drain(ctx, t, r, e.pool, aSeq); sent != 2 {
		t.Fatalf("sent %d events, want 2", sent)
	}
	recs := e.consume(ctx, t, topics.EventsFiat, 2)
	if got := topics.Header(recs[0], "id") + "," + topics.Header(recs[1], "id"); got != "e00000,e00001" {
		t.Fatalf("published %s, want the slow transaction's lower seq first", got)
	}
}

// TestEventLogPartitionsDropOnlyPublishedAndOld: maintenance creates the
// partitions the next seqs need and drops a partition only when all of it is
// behind the cursor and older than the retention window; unpublished rows
// and young partitions stay.
func TestEventLogPartitionsDropOnlyPublishedAndOld(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Now()
	clock := func() time.Time { return now }
	r := e.relay(t, relay.WithClock(clock), relay.WithRetention(time.Hour))

	insert := func(i int) {
		t.Helper()
		if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(i, "")}); err != nil {
			t.Fatal(err)
		}
	}
	partitions := func() []string {
		t.Helper()
		ps, err := pipeline.LogPartitions(ctx, e.pool)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names
	}
	insert(0)
	drain(ctx, t, r, e.pool, 1)
	// The next rows straddle the first partition's end: 999,999 stays
	// unpublished in the first partition, 1,000,000 opens the second.
	if _, err := e.pool.Exec(ctx, `SELECT setval('event_log_seq', 999998)`); err != nil {
		t.Fatal(err)
	}
	insert(1)
	insert(2)

	now = now.Add(2 * time.Hour)
	if err := r.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	want := "event_log_p0,event_log_p1000000,event_log_p2000000,event_log_p3000000"
	if got := strings.Join(partitions(), ","); got != want {
		t.Fatalf("partitions %s, want %s (nothing dropped: seq 999999 is unpublished)", got, want)
	}

	drain(ctx, t, r, e.pool, 1_000_000)
	if err := r.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	want = "event_log_p1000000,event_log_p2000000,event_log_p3000000"
	if got := strings.Join(partitions(), ","); got != want {
		t.Fatalf("partitions %s, want %s", got, want)
	}
	var left int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&left); err != nil || left != 1 {
		t.Fatalf("%d events left (err %v), want the one in the second partition", left, err)
	}

	// Near the end of what exists, maintenance opens two partitions ahead.
	if _, err := e.pool.Exec(ctx, `SELECT setval('event_log_seq', 3999990)`); err != nil {
		t.Fatal(err)
	}
	insert(3)
	drain(ctx, t, r, e.pool, 3_999_991)
	// (The clock is back to now: the second partition's row is young; the
	// third is empty and behind the cursor, so it goes.)
	now = time.Now()
	if err := r.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	want = "event_log_p1000000,event_log_p3000000,event_log_p4000000,event_log_p5000000"
	if got := strings.Join(partitions(), ","); got != want {
		t.Fatalf("partitions %s, want %s", got, want)
	}
	insert(4)
	if got := lastSeq(t, e.pool); got != 3_999_992 {
		t.Fatalf("last seq %d", got)
	}
}
