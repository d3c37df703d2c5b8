package trade_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/trade"
)

func TestAccountsAndOperations(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	accs, st := trade.NewAccounts(pool), trade.NewStore()
	now := time.Now().UTC().Truncate(time.Microsecond)

	// Concurrent first reads open one account.
	var wg sync.WaitGroup
	got := make([]trade.AccountRow, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := accs.Open(ctx, "u1", schemas.NewID(), now)
			if err != nil {
				t.Error(err)
			}
			got[i] = a
		}()
	}
	wg.Wait()
	for _, a := range got {
		if a.ID != got[0].ID || a.Balance != 0 || a.Currency != "TNU" {
			t.Fatalf("accounts %+v vs %+v", a, got[0])
		}
	}
	a := got[0]
	b, _ := accs.Open(ctx, "u2", schemas.NewID(), now)

	// Lookup by e-mail goes through users, case-insensitively.
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ('u2', 'Bob@Example.com', 'x')`); err != nil {
		t.Fatal(err)
	}
	if l, err := accs.ByEmail(ctx, "bob@example.COM"); err != nil || l.ID != b.ID || l.Owner != "Bob@Example.com" {
		t.Fatalf("lookup: %+v %v", l, err)
	}
	if _, err := accs.ByEmail(ctx, "u1@example.com"); !trade.IsNotFound(err) {
		t.Fatalf("user without a users row: %v", err)
	}

	save := func(bal []trade.Balance, ops []trade.OperationRow) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := st.LockAccounts(ctx, tx, []string{b.ID, a.ID, "missing"}); err != nil {
				return err
			}
			return st.Save(ctx, tx, bal, ops)
		})
	}
	from := a.ID
	var ops []trade.OperationRow
	for i := range 5 {
		ops = append(ops, trade.OperationRow{ID: schemas.NewID(), Kind: "topup", Amount: int64(i + 1), To: a.ID, CreatedAt: now})
	}
	ops = append(ops, trade.OperationRow{ID: schemas.NewID(), Kind: "transfer", Amount: 3, From: &from, To: b.ID, CreatedAt: now})
	if err := save([]trade.Balance{{AccountID: a.ID, Balance: 12, UpdatedAt: now}, {AccountID: b.ID, Balance: 3, UpdatedAt: now}}, ops); err != nil {
		t.Fatal(err)
	}
	if r, _ := accs.ByUser(ctx, "u1"); r.Balance != 12 {
		t.Fatalf("balance %d", r.Balance)
	}
	// Paging walks every operation of a once, newest first.
	var seen []string
	var after schemas.Position
	for {
		page, err := accs.Operations(ctx, a.ID, after, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			seen = append(seen, o.ID)
		}
		if len(page) < 4 {
			break
		}
		after = schemas.Position{At: page[len(page)-1].CreatedAt, ID: page[len(page)-1].ID}
	}
	if len(seen) != 6 {
		t.Fatalf("paged %d operations", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] >= seen[i-1] {
			t.Fatalf("not newest first: %v", seen)
		}
	}
	if n, _ := accs.CountOperations(ctx, b.ID); n != 1 {
		t.Fatalf("b has %d operations", n)
	}

	// The schema refuses a negative balance, a transfer to itself and a
	// top-up with a sender.
	if err := save([]trade.Balance{{AccountID: a.ID, Balance: -1, UpdatedAt: now}}, nil); err == nil {
		t.Fatal("negative balance stored")
	}
	if err := save(nil, []trade.OperationRow{{ID: schemas.NewID(), Kind: "transfer", Amount: 1, From: &from, To: a.ID, CreatedAt: now}}); err == nil {
		t.Fatal("transfer to itself stored")
	}
	if err := save(nil, []trade.OperationRow{{ID: schemas.NewID(), Kind: "topup", Amount: 1, From: &from, To: b.ID, CreatedAt: now}}); err == nil {
		t.Fatal("top-up with a sender stored")
	}
}
