package fiat_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// A wallet is announced once, in the transaction that inserts it: by
// CreateWallet, and by EnsureWallet only when it made one.
func TestWalletCreatedEvents(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	s := store.NewStore(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ('w1', 'w1@example.com', 'x'), ('w2', 'w2@example.com', 'x')`); err != nil {
		t.Fatal(err)
	}
	usd := schemas.NewID()
	if err := s.CreateWallet(ctx, store.Wallet{ID: usd, UserID: "w1", Currency: "USD", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	_ = s.CreateWallet(ctx, store.Wallet{ID: schemas.NewID(), UserID: "w1", Currency: "USD", CreatedAt: now}) // conflict
	kzt, err := s.EnsureWallet(ctx, "w2", "KZT", schemas.NewID(), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureWallet(ctx, "w2", "KZT", schemas.NewID(), now); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT topic, key, payload FROM outbox WHERE event_type = $1 ORDER BY id`, schemas.TypeWalletCreated)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []schemas.WalletCreated
	for rows.Next() {
		var topic, key string
		var payload []byte
		if err := rows.Scan(&topic, &key, &payload); err != nil {
			t.Fatal(err)
		}
		env, err := schemas.Read(payload)
		if err != nil {
			t.Fatal(err)
		}
		var w schemas.WalletCreated
		if err := json.Unmarshal(env.Data, &w); err != nil {
			t.Fatal(err)
		}
		if topic != "events.fiat" || key != w.WalletID {
			t.Fatalf("wallet.created on %s keyed %s", topic, key)
		}
		got = append(got, w)
	}
	if len(got) != 2 || got[0].WalletID != usd || got[0].UserID != "w1" || got[0].Currency != "USD" || got[0].Kind != "user" ||
		got[1].WalletID != kzt || got[1].UserID != "w2" || got[1].Currency != "KZT" {
		t.Fatalf("wallet.created events %+v", got)
	}
}
