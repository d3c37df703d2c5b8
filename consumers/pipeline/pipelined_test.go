package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// pipelinedCounter is counterHandler on the pipelined path: Load locks the
// counter row, Decide adds in memory and queues the new total.
type pipelinedCounter struct{ counterHandler }

type counterLoaded struct{ total int64 }

func (pipelinedCounter) Load(_ []pipeline.Command, b *pgx.Batch) pipeline.Loaded {
	l := &counterLoaded{}
	b.Queue(`SELECT total FROM test_counter FOR UPDATE`).QueryRow(func(row pgx.Row) error { return row.Scan(&l.total) })
	return l
}

func (l *counterLoaded) Decide(_ context.Context, fresh []pipeline.Command, b *pgx.Batch) ([]pipeline.Outcome, error) {
	out := make([]pipeline.Outcome, len(fresh))
	for i, c := range fresh {
		d, err := schemas.DataAs[addData](c.Env)
		if err != nil {
			return nil, err
		}
		if d.Amount == poisonAmount {
			var nothing *addData
			_ = nothing.Amount
		}
		l.total += d.Amount
		out[i] = pipeline.JSON(200, map[string]int64{"total": l.total})
	}
	b.Queue(`UPDATE test_counter SET total = $1`, l.total)
	return out, nil
}

func newPipelinedRunner(t testing.TB, pool *pgxpool.Pool, brokers []string, hook func(context.Context) error) *pipeline.Runner {
	t.Helper()
	return newRunnerOf(t, pipelinedCounter{}, pool, brokers, hook)
}

// TestPipelinedPanicAndCrash: on the pipelined path a handler panic parks
// only its command, and a consumer that dies after the commit and before
// its offsets applies nothing twice when its batch is redelivered.
func TestPipelinedPanicAndCrash(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	publish(t, ctx, cl, command(t, "before", 5), command(t, "poison", poisonAmount), command(t, "after", 7))

	errCrash := errors.New("simulated crash")
	var once sync.Once
	first := newPipelinedRunner(t, pool, brokers, func(context.Context) error {
		err := error(nil)
		once.Do(func() { err = errCrash })
		return err
	})
	if err := first.Run(ctx); !errors.Is(err, errCrash) {
		t.Fatalf("first runner: %v", err)
	}
	second := newPipelinedRunner(t, pool, brokers, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- second.Run(runCtx) }()
	wantParked(t, ctx, brokers, "poison")
	if got := total(t, pool); got != 12 {
		t.Fatalf("total = %d, want 12 (each command around the poison one applied once)", got)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
