package fiat_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// transferBatches funds 100 wallets and builds b.N batches of 1000
// transfers among them, all paying the one fee wallet.
func transferBatches(b *testing.B, pool *pgxpool.Pool) [][]pipeline.Command {
	const n = 100
	wallets := make([]string, n)
	for i := range wallets {
		wallets[i] = fund(b, pool, "bu"+strconv.Itoa(i), 1_000_000_000)
	}
	batches := make([][]pipeline.Command, b.N)
	for it := range batches {
		cmds := make([]pipeline.Command, 1000)
		for i := range cmds {
			from, to := (i+it)%n, (i*7+it+1)%n
			if from == to {
				to = (to + 1) % n
			}
			cmds[i] = transferCmd(b, wallets[from], wallets[to], "bu"+strconv.Itoa(from), "bu"+strconv.Itoa(to), 10)
		}
		batches[it] = cmds
	}
	return batches
}

// BenchmarkApplyBatch measures Apply (the same reads and writes as the
// runner's path, in a pgx.Tx) on the real database.
func BenchmarkApplyBatch(b *testing.B) {
	pool, _ := pgtest.NewDB(b)
	ctx := context.Background()
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		b.Fatal(err)
	}
	batches := transferBatches(b, pool)
	b.ReportAllocs()
	b.ResetTimer()
	for _, cmds := range batches {
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := h.Apply(ctx, tx, cmds)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "transfers/s")
}

// BenchmarkPipelinedTransfers measures the runner's path for a batch of
// 1000 transfers: Load queues the locks, one round trip, Decide queues the
// writes, one round trip (rolled back, so every iteration starts from the
// same rows). Decoding the commands is inside the timer; building them is
// not.
func BenchmarkPipelinedTransfers(b *testing.B) {
	pool, _ := pgtest.NewDB(b)
	ctx := context.Background()
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		b.Fatal(err)
	}
	batches := transferBatches(b, pool)
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
