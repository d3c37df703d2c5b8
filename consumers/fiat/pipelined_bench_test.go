package fiat_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// BenchmarkPipelinedTransfers measures the runner's path for a batch of
// 1000 transfers among 100 wallets: Load queues the locks, one round trip,
// Decide queues the writes, one round trip (rolled back, so every
// iteration starts from the same rows). The command decoding is inside
// the timer; building the commands is not.
func BenchmarkPipelinedTransfers(b *testing.B) {
	pool, _ := pgtest.NewDB(b)
	ctx := context.Background()
	const n = 100
	wallets := make([]string, n)
	for i := range wallets {
		wallets[i] = fund(b, pool, "pu"+strconv.Itoa(i), 1_000_000_000)
	}
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		b.Fatal(err)
	}
	batches := make([][]pipeline.Command, b.N)
	for it := range batches {
		cmds := make([]pipeline.Command, 1000)
		for i := range cmds {
			from, to := (i+it)%n, (i*7+it+1)%n
			if from == to {
				to = (to + 1) % n
			}
			cmds[i] = transferCmd(b, wallets[from], wallets[to], "pu"+strconv.Itoa(from), "pu"+strconv.Itoa(to), 10)
		}
		batches[it] = cmds
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, cmds := range batches {
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		reads := &pgx.Batch{}
		l := h.Load(cmds, reads)
		if err := tx.SendBatch(ctx, reads).Close(); err != nil {
			b.Fatal(err)
		}
		writes := &pgx.Batch{}
		if _, err := l.Decide(ctx, cmds, writes); err != nil {
			b.Fatal(err)
		}
		if err := tx.SendBatch(ctx, writes).Close(); err != nil {
			b.Fatal(err)
		}
		_ = tx.Rollback(ctx)
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "transfers/s")
}
