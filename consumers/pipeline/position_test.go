package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/topics"
)

// produceCommands publishes commands with ids prefix1.. prefixN and the
// given amounts (all on one key, so one partition).
func produceCommands(t *testing.T, cl *kgo.Client, prefix string, amounts ...int64) {
	t.Helper()
	var recs []*kgo.Record
	for i, a := range amounts {
		rec, err := topics.Record(topics.FiatCommands, command(t, fmt.Sprintf("%s%d", prefix, i+1), a).Env)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// runGroup runs a runner of the test group; stop cancels it and returns
// what Run returned.
func runGroup(t *testing.T, pool *pgxpool.Pool, brokers []string, acceptGap bool) (stop func() error, done chan error) {
	t.Helper()
	r, err := pipeline.NewRunner(pipeline.Config{Group: "test-group", Topics: []string{topics.FiatCommands},
		Brokers: brokers, AcceptGap: acceptGap}, pool, counterHandler{}, pipeline.NewMetrics(prometheus.NewRegistry()),
		slog.New(slog.NewTextHandler(testLog{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() error { cancel(); return <-done }, done
}

func waitTotal(t *testing.T, pool *pgxpool.Pool, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for total(t, pool) != want {
		if time.Now().After(deadline) {
			t.Fatalf("total %d, want %d", total(t, pool), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storedPosition returns the test group's only stored position.
func storedPosition(t *testing.T, pool *pgxpool.Pool) (int32, int64) {
	t.Helper()
	var part int32
	var next int64
	if err := pool.QueryRow(context.Background(), `SELECT partition, next_offset FROM consumer_positions
		WHERE group_name = 'test-group' AND topic = $1`, topics.FiatCommands).Scan(&part, &next); err != nil {
		t.Fatal(err)
	}
	return part, next
}

// TestRestoredDatabaseReappliesFromItsPosition: the database goes back to
// an earlier state (as a restore would put it: the counter, the applied
// command ids and the stored position of that moment) while the group's
// Kafka offset stays at the end. The restarted group re-reads from the
// database's position and applies each later command once.
func TestRestoredDatabaseReappliesFromItsPosition(t *testing.T) {
	pool, brokers := setup(t)
	ctx := context.Background()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	stop, _ := runGroup(t, pool, brokers, false)
	produceCommands(t, cl, "early-", 1, 2, 3, 4, 5)
	waitTotal(t, pool, 15)
	part, early := storedPosition(t, pool)
	if early != 5 {
		t.Fatalf("stored position %d after 5 records, want 5", early)
	}
	produceCommands(t, cl, "late-", 10, 20, 30, 40, 50)
	waitTotal(t, pool, 165)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, end := storedPosition(t, pool); end != 10 {
		t.Fatalf("stored position %d after 10 records, want 10", end)
	}
	committed, err := kadm.NewClient(cl).FetchOffsets(ctx, "test-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := committed.Lookup(topics.FiatCommands, part); o.At != 10 {
		t.Fatalf("kafka offset %d, want 10", o.At)
	}

	// The restore: the state after the first five.
	if _, err := pool.Exec(ctx, `UPDATE test_counter SET total = 15;
		DELETE FROM processed_commands WHERE command_id LIKE 'late-%';
		UPDATE consumer_positions SET next_offset = 5 WHERE group_name = 'test-group'`); err != nil {
		t.Fatal(err)
	}
	stop, _ = runGroup(t, pool, brokers, false)
	defer func() { _ = stop() }()
	waitTotal(t, pool, 165)
	deadline := time.Now().Add(10 * time.Second)
	for _, next := storedPosition(t, pool); next != 10; _, next = storedPosition(t, pool) {
		if time.Now().After(deadline) {
			t.Fatalf("stored position %d, want 10", next)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A later command is applied after them: the group is caught up, and
	// none of the five was applied twice.
	produceCommands(t, cl, "after-", 1000)
	waitTotal(t, pool, 1165)
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM processed_commands WHERE command_id LIKE 'late-%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Fatalf("%d of the 5 later commands recorded", n)
	}
}

// TestGapStopsTheGroupUntilAccepted: the database's position points at
// records the topic no longer holds. The group stops with one line naming
// the topic, the partition and the missing offsets, applying nothing; run
// with AcceptGap it records the gap and resumes at the first record there.
func TestGapStopsTheGroupUntilAccepted(t *testing.T) {
	pool, brokers := setup(t)
	ctx := context.Background()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	stop, _ := runGroup(t, pool, brokers, false)
	produceCommands(t, cl, "c-", 1, 2, 3, 4)
	waitTotal(t, pool, 10)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	part, _ := storedPosition(t, pool)
	// Restored to after the first record; the broker has since dropped
	// the first three.
	if _, err := pool.Exec(ctx, `UPDATE test_counter SET total = 1;
		DELETE FROM processed_commands WHERE command_id <> 'c-1';
		UPDATE consumer_positions SET next_offset = 1 WHERE group_name = 'test-group'`); err != nil {
		t.Fatal(err)
	}
	trim := kadm.Offsets{}
	trim.Add(kadm.Offset{Topic: topics.FiatCommands, Partition: part, At: 3, LeaderEpoch: -1})
	if _, err := kadm.NewClient(cl).DeleteRecords(ctx, trim); err != nil {
		t.Fatal(err)
	}

	_, done := runGroup(t, pool, brokers, false)
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the group did not stop on the gap")
	}
	var gap *pipeline.GapError
	if !errors.As(runErr, &gap) {
		t.Fatalf("Run returned %v, want a gap", runErr)
	}
	want := fmt.Sprintf("%s partition %d: records 1-2 are no longer on the topic", topics.FiatCommands, part)
	if msg := runErr.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") || !strings.Contains(msg, "--accept-gap") {
		t.Fatalf("gap line %q, want one line with %q and the way on", msg, want)
	}
	if got := total(t, pool); got != 1 {
		t.Fatalf("total %d after stopping on the gap, want 1 (nothing applied)", got)
	}

	stop, _ = runGroup(t, pool, brokers, true)
	defer func() { _ = stop() }()
	waitTotal(t, pool, 5) // 1 + the fourth record, the only one left
	var stored, resumed int64
	var by string
	if err := pool.QueryRow(ctx, `SELECT stored, resumed_at, accepted_by FROM consumer_gap_accepts
		WHERE group_name = 'test-group' AND topic = $1 AND partition = $2`, topics.FiatCommands, part).Scan(&stored, &resumed, &by); err != nil {
		t.Fatalf("the accepted gap is not audited: %v", err)
	}
	if stored != 1 || resumed != 3 || !strings.Contains(by, "--accept-gap") {
		t.Fatalf("audited gap stored=%d resumed=%d by=%q, want 1, 3, --accept-gap", stored, resumed, by)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
