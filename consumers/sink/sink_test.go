package sink

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/segmentio/ksuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

func TestSinkCopiesEventsOnce(t *testing.T) {
	ctx, lazy, conn, db, broker, cl := sinkFixture(t)

	var recs []*kgo.Record
	add := func(topic string, env schemas.Envelope) {
		rec, err := topics.Record(topic, env)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	now := time.Now()
	for i := range 30 {
		amt := int64(i + 1)
		e := schemas.LedgerEntry{ID: fmt.Sprintf("entry-%d", i), Height: int64(i + 1), Kind: "fiat:transfer",
			SourceID: fmt.Sprintf("tx-%d", i), AmountCents: &amt, Timestamp: now.UTC().Format("2006-01-02T15:04:05.000000Z")}
		env, _ := schemas.New(schemas.TypeLedgerEntryAdded, e.ID, "", e, now)
		add(topics.EventsLedger, env)
		if i%5 == 0 {
			add(topics.EventsLedger, env) // the relay sent it twice
		}
		up, _ := schemas.New(schemas.TypeScoreUpdated, "u1", "u1", schemas.ScoreUpdated{EventID: fmt.Sprintf("rep-%d", i),
			UserID: "u1", Weight: 1, NewScore: int64(i + 1), NewRank: "seedling", Seq: int64(i + 1)}, now)
		add(topics.EventsReputation, up)
	}
	other, _ := schemas.New("transfer.completed", "w1", "u1", map[string]any{"txId": "t"}, now)
	add(topics.EventsFiat, other)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	run := func() func() {
		s, err := New(Config{Brokers: broker.Addrs(), Database: db, MaxBatch: 7}, lazy, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Run(rctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("sink: %v", err)
			}
		}
	}
	stop := run()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("the copy", func() bool {
		n, err := clickhouse.LedgerCount(ctx, conn, db)
		m, err2 := clickhouse.ReputationCount(ctx, conn, db)
		return err == nil && err2 == nil && n == 30 && m == 30
	})
	stop()
	// Redeliver everything from the start (a new group), as after a crash
	// before the offset commit: nothing may be counted twice.
	s2, err := New(Config{Brokers: broker.Addrs(), Database: db, Group: "sink-replay"}, lazy, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s2.Run(rctx) }()
	adm := kadm.NewClient(cl)
	waitFor("the replay", func() bool {
		offs, err := adm.FetchOffsets(ctx, "sink-replay")
		if err != nil {
			return false
		}
		var done int64
		offs.Each(func(o kadm.OffsetResponse) { done += o.At })
		return done == int64(len(recs))
	})
	cancel()
	<-done

	st, err := clickhouse.QueryLedgerStats(ctx, conn, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.ByKind["fiat:transfer"].Last24h != 30 || st.Totals.Last30d != 30 {
		t.Fatalf("stats after replay: %+v", st)
	}
	lb, err := clickhouse.QueryLeaderboard(ctx, conn, db, clickhouse.LeaderQuery{Limit: 5})
	if err != nil || len(lb) != 1 || lb[0].Score != 30 {
		t.Fatalf("leaderboard after replay: %+v %v", lb, err)
	}
	var distinct uint64
	if err := conn.QueryRow(ctx, "SELECT uniqExact(id) FROM "+db+".events").Scan(&distinct); err != nil || distinct != 61 {
		t.Fatalf("distinct events %d %v", distinct, err)
	}
}

// TestSinkFlushesOnShutdown: records gathered for a batch not yet due are
// inserted when the sink stops, and only then committed.
func TestSinkFlushesOnShutdown(t *testing.T) {
	ctx, lazy, conn, db, broker, cl := sinkFixture(t)
	now := time.Now()
	const n = 12
	for i := range n {
		amt := int64(i + 1)
		e := schemas.LedgerEntry{ID: fmt.Sprintf("entry-%d", i), Height: int64(i + 1), Kind: "fiat:transfer",
			SourceID: fmt.Sprintf("tx-%d", i), AmountCents: &amt, Timestamp: now.UTC().Format("2006-01-02T15:04:05.000000Z")}
		env, _ := schemas.New(schemas.TypeLedgerEntryAdded, e.ID, "", e, now)
		rec, _ := topics.Record(topics.EventsLedger, env)
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Config{Brokers: broker.Addrs(), Database: db, FlushInterval: time.Hour}, lazy,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for s.gathered.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("gathered %d of %d records", s.gathered.Load(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	adm := kadm.NewClient(cl)
	committed := func() int64 {
		offs, err := adm.FetchOffsets(ctx, topics.GroupSink)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		offs.Each(func(o kadm.OffsetResponse) { sum += max(o.At, 0) })
		return sum
	}
	if c := committed(); c != 0 {
		t.Fatalf("%d offsets committed before the batch was due", c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, err := clickhouse.LedgerCount(ctx, conn, db); err != nil || got != n {
		t.Fatalf("ledger rows after shutdown: %d %v, want %d", got, err, n)
	}
	if c := committed(); c != n {
		t.Fatalf("committed %d offsets after shutdown, want %d", c, n)
	}
}

// sinkFixture connects to the local stack's ClickHouse with a database of
// its own (dropped after the test) and starts an embedded broker with a
// client.
func sinkFixture(t *testing.T) (context.Context, *clickhouse.Lazy, driver.Conn, string, *broker.Embedded, *kgo.Client) {
	t.Helper()
	addr := os.Getenv("CLICKHOUSE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:19000"
	}
	ctx := context.Background()
	lazy := clickhouse.NewLazy(addr, "default")
	conn, err := lazy.Conn(ctx)
	if err != nil {
		t.Fatalf("clickhouse (run `make test`, which starts the local stack): %v", err)
	}
	db := "t_" + strings.ToLower(ksuid.New().String())
	t.Cleanup(func() {
		_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
		_ = lazy.Close()
	})
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	cl, err := topics.NewClient(broker.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return ctx, lazy, conn, db, broker, cl
}
