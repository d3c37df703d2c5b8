package fiat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	store "github.com/fintech/platform/storage/fiat"
)

type fixedConn struct{ conn driver.Conn }

func (f fixedConn) Conn(context.Context) (driver.Conn, error) { return f.conn, nil }

// TestProcessorCredited sums deposit.completed amounts by currency from a
// sink-shaped events table on the real ClickHouse, counting a duplicated
// row (the sink is at-least-once) once.
func TestProcessorCredited(t *testing.T) {
	ctx := context.Background()
	conn, err := clickhouse.Connect(ctx, "127.0.0.1:19000", "default")
	if err != nil {
		t.Fatalf("local ClickHouse not reachable: %v", err)
	}
	defer conn.Close()
	db := "fiat_recon_" + strings.ToLower(schemas.NewID())
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db) }()
	if err := conn.Exec(ctx, `CREATE TABLE `+db+`.events (id String, topic String, type String, key String,
		actor_user_id String, occurred_at DateTime, data String, ingested_at DateTime)
		ENGINE = ReplacingMergeTree ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+db+".events (id, topic, type, key, actor_user_id, occurred_at, data, ingested_at)")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	rows := []struct{ id, typ, data string }{
		{"e1", "deposit.completed", `{"depositId":"d1","walletId":"w","transactionId":"t1","amount":1000,"currency":"KZT"}`},
		{"e1", "deposit.completed", `{"depositId":"d1","walletId":"w","transactionId":"t1","amount":1000,"currency":"KZT"}`},
		{"e2", "deposit.completed", `{"depositId":"d2","walletId":"w","transactionId":"t2","amount":250,"currency":"KZT"}`},
		{"e3", "deposit.completed", `{"depositId":"d3","walletId":"u","transactionId":"t3","amount":75,"currency":"USD"}`},
		{"e4", "transfer.completed", `{"txId":"t4","amountKzt":999,"feeKzt":1}`},
	}
	for _, r := range rows {
		if err := batch.Append(r.id, "events.fiat", r.typ, "w", "u1", now, r.data, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	got, err := store.NewProcessorAnalytics(fixedConn{conn}, db).ProcessorCredited(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["KZT"] != 1250 || got["USD"] != 75 || len(got) != 2 {
		t.Fatalf("processor credited = %v, want KZT 1250, USD 75", got)
	}
	if _, err := store.NewProcessorAnalytics(fixedConn{conn}, db+"_missing").ProcessorCredited(ctx); err == nil {
		t.Fatal("a missing database must be an error")
	}
}
