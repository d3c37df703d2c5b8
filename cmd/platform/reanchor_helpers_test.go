package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
)

// execOn returns a statement runner on pool that fails the test on error.
func execOn(t *testing.T, pool *pgxpool.Pool) func(sql string, args ...any) {
	return func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// reanchorQueued runs `platform ledger reanchor` over src and returns how
// many records it found missing and the ledger.append records it queued in
// the outbox, in queue order.
func reanchorQueued(t *testing.T, pool *pgxpool.Pool, src cledger.Source) (int, []schemas.LedgerAppend) {
	t.Helper()
	ctx := context.Background()
	counts, err := cledger.Reanchor(ctx, pool, []cledger.Source{src}, time.Now, false)
	if err != nil {
		t.Fatalf("reanchor %s: %v", src.Name(), err)
	}
	rows, err := pool.Query(ctx, `SELECT payload FROM outbox WHERE event_type = $1 ORDER BY id`, schemas.TypeLedgerAppend)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var queued []schemas.LedgerAppend
	for rows.Next() {
		var payload []byte
		if err := rows.Scan(&payload); err != nil {
			t.Fatal(err)
		}
		env, err := schemas.Decode(payload)
		if err != nil {
			t.Fatal(err)
		}
		a, err := schemas.DataAs[schemas.LedgerAppend](env)
		if err != nil {
			t.Fatal(err)
		}
		queued = append(queued, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return counts[src.Name()], queued
}
