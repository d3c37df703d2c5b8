package pipeline

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// countingTx counts the round trips a batch makes to Postgres through its
// transaction (one per statement or pgx.Batch), for
// platform_consumer_roundtrips_total.
type countingTx struct {
	pgx.Tx
	n *int
}

func (t countingTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	*t.n++
	return t.Tx.Exec(ctx, sql, args...)
}

func (t countingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	*t.n++
	return t.Tx.Query(ctx, sql, args...)
}

func (t countingTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	*t.n++
	return t.Tx.QueryRow(ctx, sql, args...)
}

func (t countingTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	*t.n++
	return t.Tx.SendBatch(ctx, b)
}

func (t countingTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	*t.n++
	return t.Tx.CopyFrom(ctx, table, cols, src)
}

func (t countingTx) Commit(ctx context.Context) error {
	*t.n++
	return t.Tx.Commit(ctx)
}
