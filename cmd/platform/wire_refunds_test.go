package main

import (
	"testing"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestRefundLedgerSource checks that `platform ledger reanchor` finds the
// refund transactions without a fiat:refund entry and queues each with the
// refunding merchant as the actor.
func TestRefundLedgerSource(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	exec := execOn(t, pool)
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
	n, queued := reanchorQueued(t, pool, fiatSource)
	if n != 1 || len(queued) != 1 {
		t.Fatalf("reanchor found %d, queued %d; want 1 refund", n, len(queued))
	}
	a := queued[0]
	if a.Kind != schemas.LedgerKindRefund || a.SourceID != "t1" || a.ActorUserID != "merchant" ||
		a.AmountCents == nil || *a.AmountCents != 700 {
		t.Fatalf("queued %+v", a)
	}
}
