package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// orderHandler records (key, seq) in apply order.
type orderHandler struct{}

type seqData struct {
	Seq int `json:"seq"`
}

func (orderHandler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	out := make([]pipeline.Outcome, len(cmds))
	for i, c := range cmds {
		d, err := schemas.DataAs[seqData](c.Env)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO test_order (key, seq) VALUES ($1, $2)`, c.Env.Key, d.Seq); err != nil {
			return nil, err
		}
		out[i] = pipeline.JSON(200, d)
	}
	return out, nil
}

// TestWorkersKeepPerKeyOrder applies 40 keys x 50 commands with 4 concurrent
// workers: every command is applied once and each key's commands in the
// order they were produced.
func TestWorkersKeepPerKeyOrder(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, `CREATE TABLE test_order (id bigserial PRIMARY KEY, key text NOT NULL, seq int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const keys, perKey = 40, 50
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for s := 0; s < perKey; s++ {
		for k := 0; k < keys; k++ {
			env, _ := schemas.New(testType, fmt.Sprintf("key-%d", k), "", seqData{Seq: s}, time.Now())
			rec, _ := topics.Record(topics.FiatCommands, env)
			cl.Produce(ctx, rec, nil)
		}
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	r, err := pipeline.NewRunner(pipeline.Config{Group: "order", Topics: []string{topics.FiatCommands}, Brokers: brokers, Workers: 4, MaxBatch: 100},
		pool, orderHandler{}, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	deadline := time.Now().Add(30 * time.Second)
	var n int
	for time.Now().Before(deadline) {
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM test_order`).Scan(&n)
		if n >= keys*perKey {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	<-done
	if n != keys*perKey {
		t.Fatalf("applied %d commands, want %d", n, keys*perKey)
	}
	var outOfOrder int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT seq, lag(seq) OVER (PARTITION BY key ORDER BY id) AS prev FROM test_order) x
		WHERE prev IS NOT NULL AND seq <> prev + 1`).Scan(&outOfOrder)
	if err != nil || outOfOrder != 0 {
		t.Fatalf("%d commands applied out of order (err %v)", outOfOrder, err)
	}
}
