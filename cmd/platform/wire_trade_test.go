package main

import (
	"context"
	"testing"
	"time"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestTradeLedgerSource checks that `platform ledger reanchor` finds the
// test-net operations without their entry and queues each with the asking
// holder as the actor and the exact decimal amount in meta.
func TestTradeLedgerSource(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO trade_accounts (id, user_id, balance, created_at, updated_at)
		VALUES ('a1', 'u1', 0, now(), now()), ('a2', 'u2', 0, now(), now())`)
	exec(`INSERT INTO trade_operations (id, kind, amount, from_account, to_account, created_at) VALUES
		('op-topup', 'topup', 120000000, NULL, 'a1', now()),
		('op-sent', 'transfer', 3, 'a1', 'a2', now() + interval '1 second'),
		('op-chained', 'transfer', 5, 'a2', 'a1', now() + interval '2 second')`)
	exec(`INSERT INTO ledger_entries (height, id, kind, source_id, ts, prev_hash, hash)
		VALUES (1, 'e1', 'trade:transfer', 'op-chained', now(), '0', 'h')`)

	counts, err := cledger.Reanchor(ctx, pool, []cledger.Source{tradeLedgerSource()}, time.Now, false)
	if err != nil || counts["trade operations"] != 2 {
		t.Fatalf("reanchor: %v %v", counts, err)
	}
	rows, err := pool.Query(ctx, `SELECT payload FROM outbox WHERE event_type = $1 ORDER BY id`, schemas.TypeLedgerAppend)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]schemas.LedgerAppend{}
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
		got[a.SourceID] = a
	}
	topup, sent := got["op-topup"], got["op-sent"]
	if len(got) != 2 || topup.Kind != schemas.LedgerKindTradeTopUp || topup.ActorUserID != "u1" ||
		topup.Meta["amount"] != schemas.FormatTNU(120000000) || topup.Meta["from"] != nil {
		t.Fatalf("queued top-up %+v (all %v)", topup, got)
	}
	if sent.Kind != schemas.LedgerKindTradeTransfer || sent.ActorUserID != "u1" ||
		sent.Meta["amount"] != schemas.FormatTNU(3) || sent.Meta["from"] != "a1" || sent.Meta["to"] != "a2" ||
		sent.Meta["currency"] != schemas.TradeCurrency {
		t.Fatalf("queued transfer %+v", sent)
	}
}
