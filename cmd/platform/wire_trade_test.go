package main

import (
	"testing"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestTradeLedgerSource checks that `platform ledger reanchor` finds the
// test-net operations without their entry and queues each with the asking
// holder as the actor and the exact decimal amount in meta.
func TestTradeLedgerSource(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	exec := execOn(t, pool)
	exec(`INSERT INTO trade_accounts (id, user_id, balance, created_at, updated_at)
		VALUES ('a1', 'u1', 0, now(), now()), ('a2', 'u2', 0, now(), now())`)
	exec(`INSERT INTO trade_operations (id, kind, amount, from_account, to_account, created_at) VALUES
		('op-topup', 'topup', 120000000, NULL, 'a1', now()),
		('op-sent', 'transfer', 3, 'a1', 'a2', now() + interval '1 second'),
		('op-chained', 'transfer', 5, 'a2', 'a1', now() + interval '2 second')`)
	exec(`INSERT INTO ledger_entries (height, id, kind, source_id, ts, prev_hash, hash)
		VALUES (1, 'e1', 'trade:transfer', 'op-chained', now(), '0', 'h')`)

	n, queued := reanchorQueued(t, pool, tradeLedgerSource())
	if n != 2 {
		t.Fatalf("reanchor found %d operations without an entry, want 2", n)
	}
	got := map[string]schemas.LedgerAppend{}
	for _, a := range queued {
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
