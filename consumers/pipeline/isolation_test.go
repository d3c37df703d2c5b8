package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/topics"
)

// isolationSeen records the isolation level each batch ran under, on the
// Apply path or (pipelined) on the two-round-trip path.
type isolationSeen struct {
	counterHandler
	seen chan string
}

func (h isolationSeen) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	var level string
	if err := tx.QueryRow(ctx, `SHOW transaction_isolation`).Scan(&level); err != nil {
		return nil, err
	}
	h.seen <- level
	return h.counterHandler.Apply(ctx, tx, cmds)
}

type pipelinedIsolationSeen struct {
	pipelinedCounter
	seen chan string
}

func (h pipelinedIsolationSeen) Load(cmds []pipeline.Command, b *pgx.Batch) pipeline.Loaded {
	b.Queue(`SHOW transaction_isolation`).QueryRow(func(row pgx.Row) error {
		var level string
		err := row.Scan(&level)
		h.seen <- level
		return err
	})
	return h.pipelinedCounter.Load(cmds, b)
}

// TestBatchesRunReadCommitted: on a database whose default isolation is
// serializable (or repeatable read), a batch still runs READ COMMITTED on
// both paths, where the order lock orders what its statements read.
func TestBatchesRunReadCommitted(t *testing.T) {
	for _, level := range []string{"serializable", "repeatable read"} {
		for _, pipelined := range []bool{false, true} {
			name := level + "/apply"
			if pipelined {
				name = level + "/pipelined"
			}
			t.Run(name, func(t *testing.T) {
				pool, brokers := setup(t)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				var db string
				if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
					t.Fatal(err)
				}
				if _, err := pool.Exec(ctx, `ALTER DATABASE `+db+` SET default_transaction_isolation = '`+level+`'`); err != nil {
					t.Fatal(err)
				}
				pool.Reset() // new connections read the new default
				var def string
				if err := pool.QueryRow(ctx, `SHOW default_transaction_isolation`).Scan(&def); err != nil || def != level {
					t.Fatalf("default isolation %q (%v), want %q", def, err, level)
				}
				seen := make(chan string, 16)
				var h pipeline.Handler = isolationSeen{seen: seen}
				if pipelined {
					h = pipelinedIsolationSeen{seen: seen}
				}
				r := newRunnerOf(t, h, pool, brokers, nil)
				runCtx, stop := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() { done <- r.Run(runCtx) }()
				defer func() { stop(); <-done }()
				cl, err := topics.NewClient(brokers)
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				publish(t, ctx, cl, command(t, "iso-1", 3))
				select {
				case got := <-seen:
					if got != "read committed" {
						t.Fatalf("the batch ran %q, want read committed", got)
					}
				case <-ctx.Done():
					t.Fatal("the batch never ran")
				}
			})
		}
	}
}
