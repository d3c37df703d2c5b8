package fiat_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestRefunds covers the refund rows (listing newest first with a
// position cursor and totals), the charge lookups and the refunded-total
// backstop: a charge can never be refunded beyond its amount.
func TestRefunds(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	s := store.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	ch := store.Charge{ID: "ch1", MerchantUserID: "m", MerchantKeyID: "k", PaymentRef: "r1", CustomerWallet: "wc",
		MerchantWallet: "wm", AuthorizationID: "a", Amount: 1_000, Fee: 1, Currency: "KZT", TransactionID: "t0", CreatedAt: now}
	if err := send(ctx, pool, func(b *pgx.Batch) { store.QueueInsertCharges(b, []store.Charge{ch}) }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ChargeByID(ctx, "ch1"); err != nil || got.MerchantUserID != "m" || got.Amount != 1_000 {
		t.Fatalf("charge by id: %+v %v", got, err)
	}
	if _, err := s.ChargeByID(ctx, "nope"); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("unknown charge: %v", err)
	}

	// Five refunds: two share a creation time (one batch), ids out of time order.
	var rows []store.Refund
	for i, id := range []string{"r-e", "r-d", "r-c", "r-b", "r-a"} {
		at := now.Add(time.Duration(min(i, 3)) * time.Second)
		rows = append(rows, store.Refund{ID: id, Source: "charge", SourceID: "ch1", RefunderUserID: "m", FromWallet: "wm",
			ToWallet: "wc", ToUser: "c", Amount: int64(100 + i), Currency: "KZT", Status: "succeeded", TransactionID: "t-" + id, CreatedAt: at})
	}
	rows = append(rows, store.Refund{ID: "r-other", Source: "charge", SourceID: "ch2", RefunderUserID: "m", FromWallet: "wm",
		ToWallet: "wc", ToUser: "c", Amount: 7, Currency: "KZT", Status: "succeeded", TransactionID: "t-o", CreatedAt: now})
	if err := send(ctx, pool, func(b *pgx.Batch) { store.QueueInsertRefunds(b, rows) }); err != nil {
		t.Fatal(err)
	}
	var got []string
	var after *store.RefundCursor
	for {
		p, err := s.RefundsOf(ctx, "charge", "ch1", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 5 || p.Refunded != 100+101+102+103+104 {
			t.Fatalf("totals %d %d", p.Total, p.Refunded)
		}
		for _, r := range p.Items {
			got = append(got, r.ID)
		}
		if len(p.Items) < 2 {
			break
		}
		last := p.Items[len(p.Items)-1]
		after = &store.RefundCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	// Newest first: r-b and r-a share the latest time (id order breaks the tie).
	want := []string{"r-b", "r-a", "r-c", "r-d", "r-e"}
	if len(got) != len(want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("listed %v, want %v", got, want)
		}
	}

	// The refunded totals are written back; beyond the amount is refused.
	if err := send(ctx, pool, func(b *pgx.Batch) { store.QueueWriteRefunded(b, map[string]int64{"ch1": 1_000}, nil) }); err != nil {
		t.Fatal(err)
	}
	locked := map[string]*store.RefundableCharge{}
	if err := send(ctx, pool, func(b *pgx.Batch) { store.QueueLockCharges(b, []string{"ch1", "nope"}, locked) }); err != nil || len(locked) != 1 || locked["ch1"].Refunded != 1_000 {
		t.Fatalf("lock charges: %+v", locked)
	}
	if err := send(ctx, pool, func(b *pgx.Batch) { store.QueueWriteRefunded(b, map[string]int64{"ch1": 1_001}, nil) }); err == nil {
		t.Fatal("a refunded total beyond the charge was stored")
	}
}

// send runs the statements queue puts on a batch, in one transaction.
func send(ctx context.Context, pool *pgxpool.Pool, queue func(*pgx.Batch)) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		queue(b)
		return tx.SendBatch(ctx, b).Close()
	})
}
