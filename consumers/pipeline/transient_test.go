package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/commandbus"
)

// failingFirst is counterHandler whose first failures attempts fail with
// what fail does in the batch's transaction: more than Config.ParkAfter, as
// a failover window can last longer than a command's attempts.
type failingFirst struct {
	counterHandler
	fail     func(ctx context.Context, tx pgx.Tx) error
	failures int32
	attempts atomic.Int32
}

func (h *failingFirst) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	if n := h.attempts.Add(1); n <= h.failures {
		if err := h.fail(ctx, tx); err != nil {
			return nil, fmt.Errorf("attempt %d: %w", n, err)
		}
		return nil, fmt.Errorf("attempt %d did not fail", n)
	}
	return h.counterHandler.Apply(ctx, tx, cmds)
}

// TestTransientErrorIsRetriedNotParked: a command whose transaction fails
// with a momentary error — its connection terminated by an operator
// (57P01, as a failover or restart does), or a write refused by a
// read-only transaction (25006, what every failover window answers) — is
// retried, more times than Config.ParkAfter: applied once, answered 200,
// never parked on the DLQ, and its offset committed only after it was
// applied.
func TestTransientErrorIsRetriedNotParked(t *testing.T) {
	tests := []struct {
		name string
		fail func(ctx context.Context, tx pgx.Tx) error
	}{
		{"connection terminated", func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
			return err
		}},
		{"read-only transaction", func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET TRANSACTION READ ONLY`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE test_counter SET total = total + 1`)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, brokers := setup(t)
			wantAppliedOnce(t, pool, brokers, &failingFirst{fail: tt.fail, failures: 5})
		})
	}
}

// TestCommandErrorIsTriedAloneBeforeParking: a command failing on its own
// with an error that is not momentary — a division by zero (22012), or its
// query cancelled (57014, what a statement timeout answers too) — is tried
// again before it is parked (Config.ParkAfter): one that succeeds on its
// third attempt is applied once and answered 200.
func TestCommandErrorIsTriedAloneBeforeParking(t *testing.T) {
	tests := []struct {
		name string
		fail func(pool *pgxpool.Pool) func(ctx context.Context, tx pgx.Tx) error
	}{
		{"division by zero", func(*pgxpool.Pool) func(ctx context.Context, tx pgx.Tx) error {
			return func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `SELECT 1 / 0`)
				return err
			}
		}},
		{"query cancelled", func(pool *pgxpool.Pool) func(ctx context.Context, tx pgx.Tx) error {
			return func(ctx context.Context, tx pgx.Tx) error {
				var pid int
				if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
					return err
				}
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					cancelWhenSleeping(ctx, pool, pid)
				}()
				defer wg.Wait()
				_, err := tx.Exec(ctx, `SELECT pg_sleep(60)`)
				return err
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, brokers := setup(t)
			wantAppliedOnce(t, pool, brokers, &failingFirst{fail: tt.fail(pool), failures: 2})
		})
	}
}

// wantAppliedOnce sends one command through a runner of h and checks it
// was applied once after h's failures, answered 200 and never parked.
func wantAppliedOnce(t *testing.T, pool *pgxpool.Pool, brokers []string, h *failingFirst) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus, err := commandbus.New(ctx, brokers, 30*time.Second, false, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	r := newRunnerOf(t, h, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() { stop(); <-done }()

	rep, err := bus.Send(ctx, command(t, "transient-1", 5))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != 200 {
		t.Fatalf("reply %d %s, want 200 (a failure that passed answered as the command's own)", rep.Status, rep.Body)
	}
	var body map[string]int64
	if err := json.Unmarshal(rep.Body, &body); err != nil || body["total"] != 5 {
		t.Fatalf("reply body %s, want total 5", rep.Body)
	}
	if h.attempts.Load() <= h.failures {
		t.Fatalf("%d attempts: the failure was not injected", h.attempts.Load())
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	waitLag0(t, ctx, cl)
	if got := total(t, pool); got != 5 {
		t.Fatalf("total %d, want 5 (applied once)", got)
	}
	ends, err := topics.EndOffsets(ctx, cl, topics.DLQ(topics.FiatCommands))
	if err != nil {
		t.Fatal(err)
	}
	for p, end := range ends {
		if end != 0 {
			t.Fatalf("the DLQ holds %d records on partition %d, want none", end, p)
		}
	}
}

// cancelWhenSleeping cancels backend pid's query once it runs pg_sleep.
func cancelWhenSleeping(ctx context.Context, pool *pgxpool.Pool, pid int) {
	for ctx.Err() == nil {
		var cancelled bool
		err := pool.QueryRow(ctx, `SELECT coalesce(bool_or(pg_cancel_backend(pid)), false) FROM pg_stat_activity
			WHERE pid = $1 AND state = 'active' AND query LIKE '%pg_sleep%'`, pid).Scan(&cancelled)
		if err == nil && cancelled {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLag0 waits until the test group committed every fiat command offset.
func waitLag0(t *testing.T, ctx context.Context, cl *kgo.Client) {
	t.Helper()
	for {
		lag, err := topics.Lag(ctx, cl, "test-group", topics.FiatCommands)
		if err == nil && lag == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("lag %d (%v)", lag, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
