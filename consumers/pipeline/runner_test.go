package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
	"github.com/fintech/platform/topics/commandbus"
)

// counterHandler adds each command's amount to a counter row: applying a
// command twice would show in the total.
type counterHandler struct{}

type addData struct {
	Amount int64 `json:"amount"`
}

func (counterHandler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	out := make([]pipeline.Outcome, len(cmds))
	for i, c := range cmds {
		d, err := schemas.DataAs[addData](c.Env)
		if err != nil {
			return nil, err
		}
		if d.Amount == poisonAmount {
			var nothing *addData
			_ = nothing.Amount // a nil dereference, as a handler bug would
		}
		var total int64
		if err := tx.QueryRow(ctx, `UPDATE test_counter SET total = total + $1 RETURNING total`, d.Amount).Scan(&total); err != nil {
			return nil, err
		}
		out[i] = pipeline.JSON(200, map[string]int64{"total": total})
	}
	return out, nil
}

const testType = "user.registered" // any type the registry knows

// poisonAmount makes counterHandler panic.
const poisonAmount = 13

func setup(t testing.TB) (*pgxpool.Pool, []string) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE test_counter (total bigint NOT NULL); INSERT INTO test_counter VALUES (0)`); err != nil {
		t.Fatal(err)
	}
	broker, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	return pool, broker.Addrs()
}

func newRunner(t testing.TB, pool *pgxpool.Pool, brokers []string, hook func(context.Context) error) *pipeline.Runner {
	t.Helper()
	return newRunnerOf(t, counterHandler{}, pool, brokers, hook)
}

// newRunnerOf is the test group's runner of h on the fiat command topic.
func newRunnerOf(t testing.TB, h pipeline.Handler, pool *pgxpool.Pool, brokers []string, hook func(context.Context) error) *pipeline.Runner {
	t.Helper()
	r, err := pipeline.NewRunner(pipeline.Config{
		Group: "test-group", Topics: []string{topics.FiatCommands}, Brokers: brokers, AfterDBCommit: hook,
	}, pool, h, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func command(t *testing.T, id string, amount int64) commandbus.Command {
	t.Helper()
	env, err := schemas.New(testType, "wallet-1", "user-1", addData{Amount: amount}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env.ID = id
	env.RequestHash = "h"
	return commandbus.Command{Topic: topics.FiatCommands, Env: env}
}

func total(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT total FROM test_counter`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCrashAfterCommitBeforeOffsets stops the consumer after the Postgres
// commit and before the offset commit. The restarted consumer gets the same
// record again: it must not apply it twice, and the waiting request must
// still get its reply.
func TestCrashAfterCommitBeforeOffsets(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	bus, err := commandbus.New(ctx, brokers, 20*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()

	errCrash := errors.New("simulated crash")
	var once sync.Once
	var armed atomic.Bool
	crashed := make(chan struct{})
	first := newRunner(t, pool, brokers, func(context.Context) error {
		err := error(nil)
		if armed.Load() {
			once.Do(func() { err = errCrash; close(crashed) })
		}
		return err
	})
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Run(ctx) }()

	// A first command, its offset committed: the group has a Kafka offset.
	// (A group without one resumes at its stored position, past the
	// crashed batch: its request is answered on its retry, from the stored
	// result.)
	if rep, err := bus.Send(ctx, command(t, "cmd-warm-1", 0)); err != nil || rep.Status != 200 {
		t.Fatalf("first command: %+v %v", rep, err)
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	waitLag0(t, ctx, cl)
	armed.Store(true)

	type result struct {
		rep schemas.Reply
		err error
	}
	replied := make(chan result, 1)
	go func() {
		rep, err := bus.Send(ctx, command(t, "cmd-crash-1", 7))
		replied <- result{rep, err}
	}()

	<-crashed
	if err := <-firstDone; !errors.Is(err, errCrash) {
		t.Fatalf("first runner stopped with %v, want the simulated crash", err)
	}
	if got := total(t, pool); got != 7 {
		t.Fatalf("after the crash total = %d, want 7 (the batch was committed)", got)
	}

	// Restart: the record is redelivered because its offset was never committed.
	second := newRunner(t, pool, brokers, nil)
	secondCtx, stopSecond := context.WithCancel(ctx)
	secondDone := make(chan error, 1)
	go func() { secondDone <- second.Run(secondCtx) }()

	res := <-replied
	if res.err != nil {
		t.Fatalf("reply not delivered after restart: %v", res.err)
	}
	if res.rep.Status != 200 || !res.rep.Replayed {
		t.Fatalf("reply = %+v, want the stored 200 result marked replayed", res.rep)
	}
	var body map[string]int64
	if err := json.Unmarshal(res.rep.Body, &body); err != nil || body["total"] != 7 {
		t.Fatalf("reply body = %s, want total 7", res.rep.Body)
	}
	if got := total(t, pool); got != 7 {
		t.Fatalf("after redelivery total = %d, want 7 (applied exactly once)", got)
	}

	// A new command after the restart is applied normally.
	rep, err := bus.Send(ctx, command(t, "cmd-after-1", 5))
	if err != nil || rep.Status != 200 || rep.Replayed {
		t.Fatalf("next command: %+v %v", rep, err)
	}
	if got := total(t, pool); got != 12 {
		t.Fatalf("total = %d, want 12", got)
	}
	stopSecond()
	if err := <-secondDone; err != nil {
		t.Fatalf("second runner: %v", err)
	}
}

// TestDuplicatesAndConflicts sends the same command id twice (a client
// retry) and once with a different request hash (a reused key).
func TestDuplicatesAndConflicts(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commandbus.New(ctx, brokers, 20*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	r := newRunner(t, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()

	// Two copies of one command in flight at once: one applies, both answer alike.
	var wg sync.WaitGroup
	replies := make([]schemas.Reply, 2)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := bus.Send(ctx, command(t, "idem-same", 3))
			if err != nil {
				t.Error(err)
			}
			replies[i] = rep
		}()
	}
	wg.Wait()
	if string(replies[0].Body) != string(replies[1].Body) || replies[0].Status != 200 {
		t.Fatalf("replies differ: %s vs %s", replies[0].Body, replies[1].Body)
	}
	if got := total(t, pool); got != 3 {
		t.Fatalf("total = %d, want 3", got)
	}

	// A later retry gets the stored answer, marked replayed.
	rep, err := bus.Send(ctx, command(t, "idem-same", 3))
	if err != nil || !rep.Replayed || string(rep.Body) != string(replies[0].Body) {
		t.Fatalf("retry = %+v, %v", rep, err)
	}

	conflict := command(t, "idem-same", 3)
	conflict.Env.RequestHash = "other"
	rep, err = bus.Send(ctx, conflict)
	if err != nil || rep.Status != 409 {
		t.Fatalf("reused key = %+v, %v; want 409", rep, err)
	}
	if got := total(t, pool); got != 3 {
		t.Fatalf("total = %d, want 3", got)
	}
	stop()
	<-done
}

// TestUnreadableRecordsGoToDLQ parks a record this build cannot read and
// keeps consuming.
func TestUnreadableRecordsGoToDLQ(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bad := topics.RawRecord(topics.FiatCommands, "k", "nope", "x", []byte(`{"id":"x","type":"no.such.type","schemaVersion":1,"data":{}}`))
	garbage := topics.RawRecord(topics.FiatCommands, "k", "", "", []byte(`not json`))
	if err := cl.ProduceSync(ctx, bad, garbage).FirstErr(); err != nil {
		t.Fatal(err)
	}
	good := command(t, "after-bad", 4)
	rec, err := topics.Record(good.Topic, good.Env)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}

	r := newRunner(t, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	deadline := time.Now().Add(20 * time.Second)
	for total(t, pool) != 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := total(t, pool); got != 4 {
		t.Fatalf("total = %d, want 4", got)
	}
	stop()
	<-done

	dlq, err := topics.NewClient(brokers, kgoConsume(topics.DLQ(topics.FiatCommands))...)
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	var parked int
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	for parked < 2 && pctx.Err() == nil {
		parked += len(dlq.PollFetches(pctx).Records())
	}
	if parked != 2 {
		t.Fatalf("dlq has %d records, want 2", parked)
	}
}

// TestHandlerPanicParksOnlyItsCommand: a handler that panics on one command
// does not stop the consumer; that command is parked on the DLQ and the
// rest of its batch is applied.
func TestHandlerPanicParksOnlyItsCommand(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	publish(t, ctx, cl, command(t, "before", 5), command(t, "poison", poisonAmount), command(t, "after", 7))
	r := newRunner(t, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	wantParked(t, ctx, brokers, "poison")
	if got := total(t, pool); got != 12 {
		t.Fatalf("total = %d, want 12 (the commands around the poison one applied)", got)
	}
	select {
	case err := <-done:
		t.Fatalf("the consumer stopped: %v", err)
	default:
	}
	stop()
	<-done
}

// TestConsumerThatLostItsOffsetsAppliesNothingTwice: a consumer group
// without committed offsets (lost, or renamed) reads the command topic from
// the start; every command it meets was applied already and is remembered
// (PROCESSED_RETENTION covers the topic's retention), so nothing is applied
// twice.
func TestConsumerThatLostItsOffsetsAppliesNothingTwice(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 20 {
		publish(t, ctx, cl, command(t, fmt.Sprintf("cmd-%d", i), int64(i+20))) // never poisonAmount
	}
	const want = 20*19/2 + 20*20
	runGroup := func(group string) {
		t.Helper()
		r, err := pipeline.NewRunner(pipeline.Config{Group: group, Topics: []string{topics.FiatCommands}, Brokers: brokers},
			pool, counterHandler{}, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		waitDrained(t, ctx, cl, group)
		stop()
		<-done
	}
	runGroup("first-group")
	if got := total(t, pool); got != want {
		t.Fatalf("total after the first consumer = %d, want %d", got, want)
	}
	// A group with no offsets re-reads all 20 commands from the start.
	runGroup("group-without-offsets")
	if got := total(t, pool); got != want {
		t.Fatalf("total after re-reading the topic = %d, want %d: commands applied twice", got, want)
	}
}

// TestCommandWithBadTextIsRefusedWithoutSplittingItsBatch: a command whose
// data holds a NUL character is answered 422 on its own, without reaching
// Postgres (which would fail the whole batch) and without the DLQ; the
// commands around it are applied.
func TestCommandWithBadTextIsRefusedWithoutSplittingItsBatch(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bad := command(t, "nul", 40)
	bad.Env.Data = []byte(`{"amount":40,"memo":"a\u0000b"}`)
	bad.Env.ReplyTo = "gw-test"
	bad.Env.CorrelationID = "corr-nul"
	publish(t, ctx, cl, command(t, "before", 30), bad, command(t, "after", 50))
	r := newRunner(t, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	replies, err := topics.NewClient(brokers, kgoConsume(topics.GatewayReplies)...)
	if err != nil {
		t.Fatal(err)
	}
	defer replies.Close()
	var reply *schemas.Reply
	for reply == nil && ctx.Err() == nil {
		replies.PollFetches(ctx).EachRecord(func(rec *kgo.Record) {
			env, err := schemas.Decode(rec.Value)
			if err == nil && env.CorrelationID == "corr-nul" {
				rep, _ := schemas.DataAs[schemas.Reply](env)
				reply = &rep
			}
		})
	}
	waitDrained(t, ctx, cl, "test-group")
	stop()
	<-done
	if reply == nil || reply.Status != 422 || !strings.Contains(string(reply.Body), `"data.memo"`) {
		t.Fatalf("reply to the command with a NUL = %+v", reply)
	}
	if got := total(t, pool); got != 80 {
		t.Fatalf("total = %d, want 80 (the commands around the refused one applied)", got)
	}
	end, err := topics.EndOffsets(ctx, cl, topics.DLQ(topics.FiatCommands))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range end {
		if n != 0 {
			t.Fatalf("the refused command was parked on the DLQ")
		}
	}
}

// publish produces commands to their topic and waits for the broker.
func publish(t *testing.T, ctx context.Context, cl *kgo.Client, cmds ...commandbus.Command) {
	t.Helper()
	for _, c := range cmds {
		rec, err := topics.Record(c.Topic, c.Env)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitDrained waits until group committed past every command produced so
// far (consumer lag 0): the signal that everything was applied or refused.
func waitDrained(t *testing.T, ctx context.Context, cl *kgo.Client, group string) {
	t.Helper()
	for ctx.Err() == nil {
		if lag, err := topics.Lag(ctx, cl, group, topics.FiatCommands); err == nil && lag == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("group %s did not drain", group)
}
