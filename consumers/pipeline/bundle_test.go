package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/commandbus"
)

// scoringHandler is counterHandler emitting three score updates (a bundled
// topic) and one fiat event per command.
type scoringHandler struct{ counterHandler }

func (h scoringHandler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	out, err := h.counterHandler.Apply(ctx, tx, cmds)
	if err != nil {
		return nil, err
	}
	for i, c := range cmds {
		for k := 0; k < 3; k++ {
			env, err := schemas.New(schemas.TypeScoreUpdated, fmt.Sprintf("user-%d", k), "", map[string]string{"cmd": c.Env.ID}, time.Now())
			if err != nil {
				return nil, err
			}
			out[i].Emit = append(out[i].Emit, pipeline.Emission{Topic: topics.EventsReputation, Env: env})
		}
		env, err := schemas.New(schemas.TypeTransferCompleted, "wallet-1", "", map[string]string{"cmd": c.Env.ID}, time.Now())
		if err != nil {
			return nil, err
		}
		out[i].Emit = append(out[i].Emit, pipeline.Emission{Topic: topics.EventsFiat, Env: env})
	}
	return out, nil
}

// TestEmissionsToBundledTopicsAreBundled: what a batch emits to a bundled
// topic is written as bundle rows (fewer than the batches), carrying every
// event once; other topics keep one row per event.
func TestEmissionsToBundledTopicsAreBundled(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commandbus.New(ctx, brokers, 20*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	const n = 12
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			rep, err := bus.Send(ctx, command(t, fmt.Sprintf("bundle-%d", i), 1))
			if err == nil && rep.Status != 200 {
				err = fmt.Errorf("status %d", rep.Status)
			}
			errs <- err
		}(i)
	}
	// Every command is on the topic before the runner starts, so its first
	// batches hold several of them.
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	defer adm.Close()
	for {
		ends, err := adm.ListEndOffsets(ctx, topics.FiatCommands)
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if err == nil && sum == n {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d commands on the topic", sum, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := newRunnerOf(t, scoringHandler{}, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	stop()
	<-done

	rows, err := pool.Query(ctx, `SELECT u.topic, u.type, u.payload FROM event_log, unnest(topics, types, payloads) AS u(topic, type, payload)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var bundles, fiat int
	scores := map[string]int{}
	for rows.Next() {
		var topic, typ string
		var payload []byte
		if err := rows.Scan(&topic, &typ, &payload); err != nil {
			t.Fatal(err)
		}
		switch topic {
		case topics.EventsFiat:
			fiat++
		case topics.EventsReputation:
			if typ != schemas.TypeEventBundle {
				t.Fatalf("a %s row on a bundled topic", typ)
			}
			bundles++
			env, err := schemas.Read(payload)
			if err != nil {
				t.Fatal(err)
			}
			events, err := schemas.Unbundle(env)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range events {
				ev, err := schemas.Read(raw)
				if err != nil || ev.Type != schemas.TypeScoreUpdated {
					t.Fatalf("bundled %s (%v)", raw, err)
				}
				scores[string(ev.Data)]++
			}
		}
	}
	if fiat != n || len(scores) != n {
		t.Fatalf("%d fiat rows and score updates of %d commands, want %d each", fiat, len(scores), n)
	}
	for cmd, k := range scores {
		if k != 3 {
			t.Fatalf("command %s has %d score updates, want 3", cmd, k)
		}
	}
	if bundles == 0 || bundles >= n {
		t.Fatalf("%d bundles for %d commands", bundles, n)
	}
	t.Logf("%d commands: %d fiat rows, %d bundles carrying %d score updates", n, fiat, bundles, 3*n)
}

// TestRunnerAppliesBundledCommands: a bundle on a command topic (what a
// batch emits to ledger.append) is applied command by command, each once,
// also when the bundle is delivered again.
func TestRunnerAppliesBundledCommands(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var envs []schemas.Envelope
	for i, amount := range []int64{3, 5, 7} {
		envs = append(envs, command(t, fmt.Sprintf("bundled-%d", i), amount).Env)
	}
	for i := range envs {
		envs[i].ReplyTo = "" // emitted commands wait for no reply
	}
	bundle, err := schemas.Bundle(topics.FiatCommands, envs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 2 { // delivered twice
		rec, err := topics.Record(topics.FiatCommands, bundle)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	r := newRunner(t, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() { stop(); <-done }()
	for total(t, pool) != 15 || processedOf(t, pool, "bundled-%") != 3 {
		if ctx.Err() != nil {
			t.Fatalf("total %d, %d processed rows: want 15 and 3", total(t, pool), processedOf(t, pool, "bundled-%"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Both copies are consumed (lag 0) and nothing more was applied.
	for {
		lag, err := topics.Lag(ctx, cl, "test-group", topics.FiatCommands)
		if err == nil && lag == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("lag %d (%v)", lag, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := total(t, pool); got != 15 {
		t.Fatalf("total %d after the bundle came twice, want 15", got)
	}
}

func processedOf(t *testing.T, pool *pgxpool.Pool, like string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM processed_commands WHERE command_id LIKE $1`, like).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
