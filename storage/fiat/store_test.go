package fiat_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

func TestStore(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	s := store.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ('u1', 'One@Example.com', 'x'), ('u2', 'two@example.com', 'x')`); err != nil {
		t.Fatal(err)
	}
	w1 := store.Wallet{ID: schemas.NewID(), UserID: "u1", Currency: "KZT", CreatedAt: now}
	if err := s.CreateWallet(ctx, w1); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWallet(ctx, store.Wallet{ID: schemas.NewID(), UserID: "u1", Currency: "KZT", CreatedAt: now}); !errors.Is(err, postgres.ErrConflict) {
		t.Fatalf("second KZT wallet: %v", err)
	}

	// The recipient is found case-insensitively; their wallet is made once.
	tg, err := s.TransferTarget(ctx, w1.ID, "TWO@example.com")
	if err != nil || tg.From.ID != w1.ID || tg.ToUserID != "u2" || tg.ToWalletID != "" {
		t.Fatalf("target = %+v, %v", tg, err)
	}
	id1, err := s.EnsureWallet(ctx, "u2", "KZT", schemas.NewID(), now)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := s.EnsureWallet(ctx, "u2", "KZT", schemas.NewID(), now)
	if err != nil || id1 != id2 {
		t.Fatalf("EnsureWallet twice: %s %s %v", id1, id2, err)
	}
	if tg, _ := s.TransferTarget(ctx, w1.ID, "nobody@example.com"); tg.ToUserID != "" {
		t.Fatalf("unknown recipient resolved: %+v", tg)
	}
	if _, err := s.TransferTarget(ctx, "missing", "two@example.com"); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("missing wallet: %v", err)
	}

	// History: both sides, newest first by creation time to the
	// microsecond, then id, paginated without duplicates. The ids are made
	// to sort the other way round: within one second a ksuid says nothing
	// about order (issue 25).
	var txs []store.Tx
	ids := make([]string, 7)
	for i := range ids {
		ids[i] = schemas.NewID()
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	for i := 0; i < 7; i++ {
		from, to := "u1", "u2"
		if i%2 == 1 {
			from, to = "u2", "u1"
		}
		txs = append(txs, store.Tx{ID: ids[i], Kind: "transfer", Status: "completed", FromUser: from, ToUser: to,
			Amount: int64(i + 1), Currency: "KZT", CreatedAt: now.Add(time.Duration(i) * time.Microsecond)})
	}
	if err := send(ctx, pool, func(b *pgx.Batch) { store.QueueInsertTransactions(b, txs) }); err != nil {
		t.Fatal(err)
	}
	var got []string
	var before schemas.Position
	for {
		page, err := s.Transactions(ctx, "u1", before, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range page {
			got = append(got, tx.ID)
		}
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		before = schemas.Position{At: last.CreatedAt, ID: last.ID}
	}
	if len(got) != 7 {
		t.Fatalf("history = %v", got)
	}
	for i := range got {
		if got[i] != ids[6-i] {
			t.Fatalf("history not newest first by creation time: %v, created %v", got, ids)
		}
	}
	var streamed int
	if err := s.StreamTransactions(ctx, "u1", func(store.Tx) error { streamed++; return nil }); err != nil || streamed != 7 {
		t.Fatalf("streamed %d, %v", streamed, err)
	}

	// Wallet status and the append-only audit.
	audit := store.AuditRow{ID: schemas.NewID(), Actor: "admin", Action: "wallet.freeze", Subject: w1.ID, CreatedAt: now}
	if w, err := s.SetWalletStatus(ctx, w1.ID, store.StatusFrozen, audit); err != nil || w.Status != store.StatusFrozen {
		t.Fatalf("freeze: %+v %v", w, err)
	}
	if _, err := s.SetWalletStatus(ctx, "nope", store.StatusFrozen, audit); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("freeze unknown: %v", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE fiat_audit SET action = 'x'`); err == nil {
		t.Fatal("audit rows can be updated")
	}
	if _, err := pool.Exec(ctx, `DELETE FROM fiat_audit`); err == nil {
		t.Fatal("audit rows can be deleted")
	}
	rows, err := s.Audit(ctx, schemas.Position{}, 10)
	if err != nil || len(rows) != 1 || rows[0].Action != "wallet.freeze" {
		t.Fatalf("audit = %+v %v", rows, err)
	}
}
