package main

import (
	"context"
	"testing"
	"time"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestRefundLedgerSource checks that `platform ledger reanchor` finds the
// refund transactions without a fiat:refund entry and queues each with the
// refunding merchant as the actor.
func TestRefundLedgerSource(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	refund := func(id string) {
		exec(`INSERT INTO fiat_transactions (id, kind, status, from_wallet, to_wallet, from_user, to_user, amount, currency, ref_id, created_at)
			VALUES ($1, 'refund', 'completed', 'wm', 'wc', 'merchant', 'customer', 700, 'KZT', 'r-' || $1, now())`, id)
	}
	refund("t1")
	refund("t2")
	exec(`INSERT INTO ledger_entries (height, id, kind, source_id, ts, prev_hash, hash)
		VALUES (1, 'e2', 'fiat:refund', 't2', now(), '0', 'h')`)

	var fiatSource cledger.Source
	for _, s := range ledgerSources() {
		if s.Name() == "fiat transactions" {
			fiatSource = s
		}
	}
	counts, err := cledger.Reanchor(ctx, pool, []cledger.Source{fiatSource}, time.Now, false)
	if err != nil || counts["fiat transactions"] != 1 {
		t.Fatalf("reanchor: %v %v", counts, err)
	}
	var payload []byte
	if err := pool.QueryRow(ctx, `SELECT payload FROM outbox WHERE event_type = $1`, schemas.TypeLedgerAppend).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	env, err := schemas.Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	a, err := schemas.DataAs[schemas.LedgerAppend](env)
	if err != nil || a.Kind != schemas.LedgerKindRefund || a.SourceID != "t1" || a.ActorUserID != "merchant" ||
		a.AmountCents == nil || *a.AmountCents != 700 {
		t.Fatalf("queued %+v %v", a, err)
	}
}
