package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

const salt = "appender-test-salt"

type env struct {
	pool    *pgxpool.Pool
	brokers []string
	client  *kgo.Client
}

func newEnv(t testing.TB) *env {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
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
	return &env{pool: pool, brokers: broker.Addrs(), client: cl}
}

// run starts an appender group; stop cancels it and waits for Run to return.
func (e *env) run(t testing.TB, afterCommit func(context.Context) error) (stop func() error) {
	t.Helper()
	r, err := pipeline.NewRunner(pipeline.Config{Group: topics.GroupLedger, Topics: []string{topics.LedgerAppend},
		Brokers: e.brokers, AfterDBCommit: afterCommit}, e.pool, NewAppender(salt, time.Now),
		pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func appendRecord(t testing.TB, kind, source string, amount int64) *kgo.Record {
	t.Helper()
	env, err := schemas.New(schemas.TypeLedgerAppend, "", "user-1", schemas.LedgerAppend{
		Kind: kind, SourceID: source, ActorUserID: "user-1", AmountCents: &amount, Currency: "KZT",
		Meta: map[string]any{"n": amount, "note": "é"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := topics.Record(topics.LedgerAppend, env)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func (e *env) publish(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	if err := e.client.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func (e *env) head(t testing.TB) int64 {
	t.Helper()
	var h int64
	if err := e.pool.QueryRow(context.Background(), `SELECT height FROM ledger_head`).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

func (e *env) waitHead(t testing.TB, want int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if e.head(t) >= want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("head stuck at %d, want %d", e.head(t), want)
}

// waitDrained waits until the appender group committed past every record
// published so far: whatever duplicates were sent have been applied (or
// refused) by then.
func (e *env) waitDrained(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		lag, err := topics.Lag(context.Background(), e.client, topics.GroupLedger, topics.LedgerAppend)
		if err == nil && lag == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the appender group did not catch up within 60s")
}

// checkChain asserts a gap-free chain of want entries, one per source, that
// verifies.
func (e *env) checkChain(t testing.TB, want int64) {
	t.Helper()
	ctx := context.Background()
	var n, maxH, sources int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*), coalesce(max(height),0), count(DISTINCT (kind, source_id)) FROM ledger_entries`).
		Scan(&n, &maxH, &sources); err != nil {
		t.Fatal(err)
	}
	if n != want || maxH != want || sources != want {
		t.Fatalf("entries %d, max height %d, sources %d; want %d each", n, maxH, sources, want)
	}
	res, err := ledger.Verify(ctx, e.pool, salt, 0, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || res.Height != want {
		t.Fatalf("verify: %+v", res)
	}
}

func TestConcurrentEmissionsMakeOneChain(t *testing.T) {
	e := newEnv(t)
	e.run(t, nil)
	const producers, each = 8, 60
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				kind := []string{schemas.LedgerKindTransfer, schemas.LedgerKindDeposit, schemas.LedgerKindMaskCharge}[i%3]
				src := fmt.Sprintf("p%d-%d", p, i)
				recs := []*kgo.Record{appendRecord(t, kind, src, int64(i+1))}
				if i%4 == 0 { // a re-sent emission: same source, new envelope id
					recs = append(recs, appendRecord(t, kind, src, int64(i+1)))
				}
				e.publish(t, recs...)
			}
		}()
	}
	wg.Wait()
	e.waitHead(t, producers*each)
	e.waitDrained(t) // duplicates would land after the head
	e.checkChain(t, producers*each)
}

func TestRestartContinuesChain(t *testing.T) {
	e := newEnv(t)
	var recs []*kgo.Record
	for i := range 300 {
		recs = append(recs, appendRecord(t, schemas.LedgerKindTransfer, fmt.Sprintf("tx-%d", i), int64(i+1)))
	}
	stop := e.run(t, nil)
	e.publish(t, recs[:100]...)
	e.waitHead(t, 100)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// A crash after the Postgres commit and before the offset commit: the
	// batch is redelivered to the next appender, which must not chain it again.
	crashed := errors.New("crash after commit")
	stop = e.run(t, func(context.Context) error { return crashed })
	e.publish(t, recs[100:200]...)
	e.waitHead(t, 101)
	if err := stop(); !errors.Is(err, crashed) {
		t.Fatalf("runner stopped with %v", err)
	}

	e.run(t, nil)
	e.publish(t, recs[200:]...)
	e.publish(t, recs[50:60]...) // re-sent records
	e.waitHead(t, 300)
	e.waitDrained(t)
	e.checkChain(t, 300)
}

func TestAppendValidationAndDedupe(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := NewAppender(salt, time.Now)
	mk := func(data any) pipeline.Command {
		env, err := schemas.New(schemas.TypeLedgerAppend, "", "actor-9", data, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.Command{Env: env, Topic: topics.LedgerAppend}
	}
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	cmds := []pipeline.Command{
		mk(schemas.LedgerAppend{Kind: "k", SourceID: "s1"}),
		mk(schemas.LedgerAppend{Kind: "", SourceID: "s2"}),
		mk(schemas.LedgerAppend{Kind: "k", SourceID: "s1"}),
		mk(schemas.LedgerAppend{EntryID: "fixed-id", Kind: "charity:donation", SourceID: "d1"}),
		mk(schemas.LedgerAppend{EntryID: "fixed-id", Kind: "charity:donation", SourceID: "d2"}),
	}
	out, err := a.Apply(ctx, tx, cmds)
	if err != nil {
		t.Fatal(err)
	}
	// A record that fails its data's Validate answers 400 invalid_command,
	// as through every module's table (the gateway answers a client 422).
	wantStatus := []int{201, 400, 200, 201, 409}
	for i, o := range out {
		if o.Status != wantStatus[i] {
			t.Fatalf("command %d: %d %s, want %d", i, o.Status, o.Body, wantStatus[i])
		}
	}
	if !strings.Contains(string(out[1].Body), schemas.CodeInvalidCommand) {
		t.Fatalf("the invalid record: %s, want invalid_command", out[1].Body)
	}
	if len(out[0].Emit) != 1 || out[0].Emit[0].Topic != topics.EventsLedger || len(out[2].Emit) != 0 {
		t.Fatalf("emissions: %+v / %+v", out[0].Emit, out[2].Emit)
	}
	if string(out[0].Body) != string(out[2].Body) {
		t.Fatalf("duplicate answered another entry: %s vs %s", out[0].Body, out[2].Body)
	}
	var actor, id string
	if err := tx.QueryRow(ctx, `SELECT actor_user_id, id FROM ledger_entries WHERE height = 2`).Scan(&actor, &id); err != nil {
		t.Fatal(err)
	}
	if actor != "actor-9" || id != "fixed-id" {
		t.Fatalf("actor %q id %q", actor, id)
	}
}

func TestReanchorQueuesMissingThroughTheAppender(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `CREATE TABLE reanchor_src (id text PRIMARY KEY, actor text, amount bigint);
		INSERT INTO reanchor_src VALUES ('a', 'u1', 10), ('b', 'u2', 20), ('c', 'u3', NULL)`); err != nil {
		t.Fatal(err)
	}
	src := SQLSource{Label: "test", Table: "reanchor_src", Query: `
SELECT '' , 'test:src', s.id, s.actor, s.amount, 'KZT', '{"re":true}' FROM reanchor_src s
WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'test:src' AND e.source_id = s.id) ORDER BY s.id`}
	missingTable := SQLSource{Label: "absent", Table: "no_such_table", Query: `SELECT 1/0`}

	// One of them is anchored already.
	e.run(t, nil)
	e.publish(t, appendRecord(t, "test:src", "b", 20))
	e.waitHead(t, 1)

	counts, err := Reanchor(ctx, e.pool, []Source{src, missingTable}, time.Now, true)
	if err != nil || counts["test"] != 2 || counts["absent"] != 0 {
		t.Fatalf("dry run: %v %v", counts, err)
	}
	counts, err = Reanchor(ctx, e.pool, []Source{src, missingTable}, time.Now, false)
	if err != nil || counts["test"] != 2 {
		t.Fatalf("reanchor: %v %v", counts, err)
	}
	// Publish the outbox as the relay would.
	rows, err := e.pool.Query(ctx, `SELECT topic, key, event_type, event_id, payload FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for rows.Next() {
		var topic, key, typ, id string
		var payload []byte
		if err := rows.Scan(&topic, &key, &typ, &id, &payload); err != nil {
			t.Fatal(err)
		}
		if topic == topics.LedgerAppend {
			recs = append(recs, topics.RawRecord(topic, key, typ, id, payload))
		}
	}
	rows.Close()
	if len(recs) != 2 {
		t.Fatalf("queued %d ledger.append records", len(recs))
	}
	e.publish(t, recs...)
	e.publish(t, recs...) // and a second run of the routine changes nothing
	e.waitHead(t, 3)
	e.waitDrained(t)
	e.checkChain(t, 3)
	counts, err = Reanchor(ctx, e.pool, []Source{src}, time.Now, true)
	if err != nil || counts["test"] != 0 {
		t.Fatalf("after reanchor: %v %v", counts, err)
	}
}

func TestAuditEmitsChainVerified(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.run(t, nil)
	e.publish(t, appendRecord(t, "k", "s1", 1), appendRecord(t, "k", "s2", 2))
	e.waitHead(t, 2)
	a := NewAuditor(ledger.NewVerifier(e.pool, salt, time.Now), e.pool, time.Hour, time.Now,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := a.AuditOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var payload []byte
	if err := e.pool.QueryRow(ctx, `SELECT payload FROM outbox WHERE event_type = $1`, schemas.TypeLedgerChainVerified).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	env, err := schemas.Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schemas.DataAs[schemas.LedgerChainVerified](env)
	if err != nil || !v.Valid || v.Height != 2 {
		t.Fatalf("chain_verified %+v %v", v, err)
	}
}

// TestReappendMintsSameEntry: a ledger.append record appended, lost to a
// restore (rolled back) and re-read gets the entry id and entry_added event
// id it got the first time; read once more while its entry exists, it
// appends nothing and emits nothing (one entry per source).
func TestReappendMintsSameEntry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clock := time.Now()
	a := NewAppender(salt, func() time.Time { return clock })
	env, err := schemas.New(schemas.TypeLedgerAppend, "", "actor-1", schemas.LedgerAppend{Kind: "transfer", SourceID: "tx-1"}, clock)
	if err != nil {
		t.Fatal(err)
	}
	cmds := []pipeline.Command{{Env: env, Topic: topics.LedgerAppend}}
	start := e.head(t)
	apply := func(commit bool) (status int, entryID, eventID string) {
		t.Helper()
		tx, err := e.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		out, err := a.Apply(ctx, tx, cmds)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(ctx, `SELECT id FROM ledger_entries WHERE kind = 'transfer' AND source_id = 'tx-1'`).Scan(&entryID); err != nil {
			t.Fatal(err)
		}
		if len(out[0].Emit) == 1 {
			eventID = out[0].Emit[0].Env.ID
		}
		if commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return out[0].Status, entryID, eventID
	}
	s1, entry1, event1 := apply(false)
	clock = clock.Add(time.Hour)
	s2, entry2, event2 := apply(true)
	if s1 != 201 || s2 != 201 || entry1 != entry2 || event1 != event2 || event1 == "" || entry1 == event1 {
		t.Fatalf("first %d entry %s event %s; again %d entry %s event %s", s1, entry1, event1, s2, entry2, event2)
	}
	if s3, entry3, event3 := apply(true); s3 != 200 || entry3 != entry1 || event3 != "" {
		t.Fatalf("re-read with its entry present: %d entry %s event %q", s3, entry3, event3)
	}
	if n := e.head(t); n != start+1 {
		t.Fatalf("head at %d, want %d: one entry", n, start+1)
	}
}
