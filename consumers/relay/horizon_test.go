package relay_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// shadowPath puts the schema shadow before pg_catalog, so that a function
// of shadow's replaces the built-in of the same name for every unqualified
// call (issue 43: how the horizon's evaluation order was shown).
const shadowPath = "shadow, pg_catalog, public"

// withShadow runs ddl (which creates the shadow schema's objects) in e's
// database and returns a pool on it whose sessions resolve names through
// shadowPath.
func withShadow(ctx context.Context, t *testing.T, e *env, ddl string) *pgxpool.Pool {
	t.Helper()
	if _, err := e.pool.Exec(ctx, `CREATE SCHEMA shadow`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, ddl); err != nil {
		t.Fatalf("create the shadow: %v", err)
	}
	cfg := e.pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["search_path"] = shadowPath
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// slipInShadowSQL replaces pg_current_xact_id with one that takes the real
// xid and then, the first time only, hands out a seq: a writer that took its
// seq after the horizon's xid. It is marked as the built-in is (STABLE
// STRICT COST 1), so that the planner chooses the plan it chooses for the
// built-in (a STABLE function cannot write: the sequence shadow.slips counts
// its calls).
const slipInShadowSQL = `
CREATE SEQUENCE shadow.slips;
CREATE FUNCTION shadow.pg_current_xact_id() RETURNS xid8 LANGUAGE plpgsql STABLE STRICT COST 1 AS $$
DECLARE
	x xid8 := pg_catalog.pg_current_xact_id();
BEGIN
	IF pg_catalog.nextval('shadow.slips') = 1 THEN
		PERFORM pg_catalog.nextval('public.event_log_seq');
	END IF;
	RETURN x;
END $$`

// slippedSeq is the seq the shadow handed out: the sequence's last value
// once the shadow ran, when nothing else took one since last.
func slippedSeq(ctx context.Context, t *testing.T, pool *pgxpool.Pool, last int64) int64 {
	t.Helper()
	var calls, seq int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT last_value FROM shadow.slips WHERE is_called),
		(SELECT last_value FROM event_log_seq)`).Scan(&calls, &seq); err != nil {
		t.Fatalf("the shadow was not called: %v", err)
	}
	if seq != last+1 {
		t.Fatalf("setup: the sequence is at %d, want %d (only the shadow took a seq)", seq, last+1)
	}
	return seq
}

// TestHorizonReadsTheSequenceBeforeTheXid: a seq handed out after the
// horizon took its xid is not in its bound, whatever order the planner
// evaluates the statement in (issue 43: PostgreSQL 15 took the xid first).
func TestHorizonReadsTheSequenceBeforeTheXid(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shadowed := withShadow(ctx, t, e, slipInShadowSQL)
	if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(0, "")}); err != nil {
		t.Fatal(err)
	}
	h, err := pipeline.ReadHorizon(ctx, shadowed, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	slipped := slippedSeq(ctx, t, e.pool, 1)
	if !h.HasXid {
		t.Fatalf("horizon %+v took no xid", h)
	}
	if h.LastSeq >= slipped {
		t.Fatalf("horizon bound %d includes seq %d, handed out after its xid %d was taken", h.LastSeq, slipped, h.Xid)
	}
}

// TestRelayWaitsForAWriterThatTookItsSeqAfterTheHorizonsXid: the writer
// whose seq was handed out after the horizon's xid (its own xid is later, so
// a snapshot's xmin can pass the horizon's while it runs) holds its
// transaction open: the relay publishes what came before it and waits for
// it; once it commits, its event is published. With the xid taken first, the
// relay moved its cursor past the open row, which was then never published.
func TestRelayWaitsForAWriterThatTookItsSeqAfterTheHorizonsXid(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	shadowed := withShadow(ctx, t, e, slipInShadowSQL)
	r := (&env{pool: shadowed, brokers: e.brokers}).relay(t)
	if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(0, "")}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PublishOnce(ctx); err != nil { // takes the bound (and the shadow its seq)
		t.Fatal(err)
	}
	slipped := slippedSeq(ctx, t, e.pool, 1)
	// The relay's xid is in its stored bound only; every xid taken since,
	// the writer's included, is above it.
	var relayXid string
	if err := e.pool.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&relayXid); err != nil {
		t.Fatal(err)
	}
	w, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Rollback(ctx) }()
	late := row(1, "late")
	var wXid string
	if err := w.QueryRow(ctx, `
INSERT INTO event_log (seq, xid, topics, keys, types, event_ids, payloads)
VALUES ($1, pg_current_xact_id(), ARRAY[$2], ARRAY[$3], ARRAY[$4], ARRAY[$5], ARRAY[$6::bytea]) RETURNING xid::text`,
		slipped, late.Topic, late.Key, late.Type, late.EventID, late.Payload).Scan(&wXid); err != nil {
		t.Fatal(err)
	}
	if mustUint(t, wXid) < mustUint(t, relayXid) {
		t.Fatalf("setup: the writer's xid %s is below %s, taken after the horizon's", wXid, relayXid)
	}

	// The first row is published (the relay is not stuck), then nothing
	// passes the open one, however long it waits.
	waitFor(ctx, t, "the first row is published", func() bool {
		if _, err := r.PublishOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if c := cursor(t, e.pool); c >= slipped {
			t.Fatalf("cursor moved to %d past seq %d, whose writer has not committed", c, slipped)
		}
		return cursor(t, e.pool) == slipped-1
	})
	for i := 0; i < 20; i++ {
		if _, err := r.PublishOnce(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c := cursor(t, e.pool); c >= slipped {
		t.Fatalf("cursor moved to %d past seq %d, whose writer has not committed", c, slipped)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	drain(ctx, t, r, e.pool, slipped)
	recs := e.consume(ctx, t, topics.EventsFiat, 2)
	if got := topics.Header(recs[0], "id") + "," + topics.Header(recs[1], "id"); got != "e00000,e00001" {
		t.Fatalf("published %s, want e00000,e00001", got)
	}
}

// TestWriterTakesItsXidBeforeItsSeq: a writer's transaction has its xid
// when it takes its seq, even when the row is its first write (a nextval
// that checks is put in front of the built-in).
func TestWriterTakesItsXidBeforeItsSeq(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shadowed := withShadow(ctx, t, e, `
CREATE FUNCTION shadow.nextval(regclass) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	IF pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN
		RAISE EXCEPTION 'nextval(%) before the transaction took its xid', $1;
	END IF;
	RETURN pg_catalog.nextval($1);
END $$`)
	tx, err := shadowed.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{row(0, "")}); err != nil {
		t.Fatal(err)
	}
	var seq int64
	var rowXid, txXid string
	if err := tx.QueryRow(ctx, `SELECT seq, xid::text, pg_current_xact_id()::text FROM event_log`).Scan(&seq, &rowXid, &txXid); err != nil {
		t.Fatal(err)
	}
	if seq != 1 || rowXid != txXid {
		t.Fatalf("row seq %d xid %s, want seq 1 and the transaction's xid %s", seq, rowXid, txXid)
	}
}

// slowXidShadowSQL replaces pg_current_xact_id with one that takes the real
// xid and then waits 10 ms, marked as the built-in is: a horizon that read
// the sequence after its xid would include every seq writers took in those
// 10 ms.
const slowXidShadowSQL = `
CREATE FUNCTION shadow.pg_current_xact_id() RETURNS xid8 LANGUAGE plpgsql STABLE STRICT COST 1 AS $$
DECLARE
	x xid8 := pg_catalog.pg_current_xact_id();
BEGIN
	PERFORM pg_catalog.pg_sleep(0.01);
	RETURN x;
END $$`

// TestRelayUnderManyOpenWritersPublishesEverySeqOnce: many writers take
// their xid, then their seq, and hold their transaction open across several
// horizon reads (up to 150 ms, the relay loops every 20-50 ms), so they
// commit out of seq order; some roll back. The horizon's xid is followed by
// 10 ms in which writers take seqs (the shadow above). Every committed row's
// events are published exactly once, and the cursor ends on the last seq.
func TestRelayUnderManyOpenWritersPublishesEverySeqOnce(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	shadowed := withShadow(ctx, t, e, slowXidShadowSQL)
	r := (&env{pool: shadowed, brokers: e.brokers}).relay(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()

	const writers, each = 16, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	want := map[string]bool{}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := w*each + i
				ids, err := openWriter(ctx, e.pool, n, i%7 == 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					want[id] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var last int64
	if err := e.pool.QueryRow(ctx, `SELECT last_value FROM event_log_seq`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the cursor reaches the last seq", func() bool { return cursor(t, e.pool) >= last })
	got := e.consumeAll(ctx, t, topics.EventsFiat)
	count := map[string]int{}
	for _, rec := range got {
		count[topics.Header(rec, "id")]++
	}
	var missing, twice []string
	for id := range want {
		if count[id] == 0 {
			missing = append(missing, id)
		}
	}
	for id, n := range count {
		if n > 1 || !want[id] {
			twice = append(twice, fmt.Sprintf("%s x%d", id, n))
		}
	}
	sort.Strings(missing)
	sort.Strings(twice)
	if len(missing) > 0 || len(twice) > 0 {
		t.Fatalf("%d of %d committed events never published %v; %d published more than once or not committed %v",
			len(missing), len(want), missing, len(twice), twice)
	}
}

// openWriter appends event log row n (two events) in a transaction that
// takes its xid, its seq after up to 3 ms, holds on for up to 150 ms and
// then commits, or rolls back when rollback is set. It returns the ids of
// the events it committed.
func openWriter(ctx context.Context, pool *pgxpool.Pool, n int, rollback bool) ([]string, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		return nil, err
	}
	time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
	rows := []pipeline.OutboxRow{row(n, ""), row(n+100000, "")}
	if err := pipeline.InsertOutbox(ctx, tx, rows); err != nil {
		return nil, err
	}
	time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
	if rollback {
		return nil, tx.Rollback(ctx)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return []string{rows[0].EventID, rows[1].EventID}, nil
}

// consumeAll reads topic from the start until no record arrives for a
// second.
func (e *env) consumeAll(ctx context.Context, t *testing.T, topic string) []*kgo.Record {
	t.Helper()
	cl, err := topics.NewClient(e.brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []*kgo.Record
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		recs := fs.Records()
		if len(recs) == 0 && pctx.Err() != nil {
			break
		}
		got = append(got, recs...)
	}
	return got
}
