package ledger

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/postgres/pgtest"
)

const testSalt = "test-salt"

// makeChain builds a valid chain of n entries the way the appender does and
// inserts it with COPY.
func makeChain(n int, salt string) []Entry {
	out := make([]Entry, n)
	prev := GenesisPrevHash
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		amt := int64(i*10 + 1)
		e := Entry{ID: fmt.Sprintf("e%07d", i+1), Height: int64(i + 1), Kind: []string{"fiat:transfer", "mask:charge", "gov:decision"}[i%3],
			ActorUserID: fmt.Sprintf("user-%d", i%97), SourceID: fmt.Sprintf("src-%d", i+1),
			Timestamp: ts.Add(time.Duration(i) * time.Millisecond), PrevHash: prev}
		if i%3 != 2 {
			e.AmountCents, e.Currency = &amt, "KZT"
		}
		if i%5 == 0 {
			e.Meta = []byte(fmt.Sprintf(`{"fee":%d,"memo":"n° %d \"q\""}`, i, i))
		}
		e.Hash = e.ComputeHash(salt)
		prev = e.Hash
		out[i] = e
	}
	return out
}

func insertChain(t testing.TB, pool *pgxpool.Pool, entries []Entry) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < len(entries); i += 50_000 {
		end := min(i+50_000, len(entries))
		if err := Insert(ctx, pool, entries[i:end]); err != nil {
			t.Fatalf("insert chain: %v", err)
		}
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	const n = 5000 // more than two chunks
	chain := makeChain(n, testSalt)
	insertChain(t, pool, chain)

	for _, workers := range []int{1, 3} {
		res, err := Verify(ctx, pool, testSalt, workers, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Valid || !res.Verified || res.Height != n || res.HeadHash != chain[n-1].Hash || res.BrokenAt != nil {
			t.Fatalf("intact chain: %+v", res)
		}
	}
	if res, _ := Verify(ctx, pool, "other-salt", 2, time.Now); res.Valid || *res.BrokenAt != 1 {
		t.Fatalf("wrong salt verified: %+v", res)
	}

	tests := []struct {
		name   string
		height int64
		tamper string
		reason string
	}{
		{"amount", 7, `UPDATE ledger_entries SET amount_cents = amount_cents + 1 WHERE height = $1`, ReasonHash},
		{"amount in a later chunk", 4500, `UPDATE ledger_entries SET amount_cents = 999 WHERE height = $1`, ReasonHash},
		{"meta", 2001, `UPDATE ledger_entries SET meta = '{"fee":0}' WHERE height = $1`, ReasonHash},
		{"hash", 2049, `UPDATE ledger_entries SET hash = repeat('a', 64) WHERE height = $1`, ReasonHash},
		{"prevHash", 12, `UPDATE ledger_entries SET prev_hash = repeat('b', 64) WHERE height = $1`, ReasonPrevHash},
		{"first prevHash", 1, `UPDATE ledger_entries SET prev_hash = repeat('1', 64) WHERE height = $1`, ReasonPrevHash},
		{"deleted row", 3000, `DELETE FROM ledger_entries WHERE height = $1`, ReasonGap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := chain[tt.height-1]
			if _, err := pool.Exec(ctx, tt.tamper, tt.height); err != nil {
				t.Fatal(err)
			}
			res, err := Verify(ctx, pool, testSalt, 2, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid || res.Verified || res.BrokenAt == nil || *res.BrokenAt != tt.height || res.Reason != tt.reason {
				t.Fatalf("got %+v (brokenAt %v), want broken at %d: %s", res, deref(res.BrokenAt), tt.height, tt.reason)
			}
			if res.Height != n {
				t.Fatalf("height %d, want %d", res.Height, n)
			}
			if tt.reason == ReasonPrevHash && (*res.ExpectedPrevHash != orig.PrevHash || *res.FoundPrevHash == orig.PrevHash) {
				t.Fatalf("expected/found prevHash: %s %s", *res.ExpectedPrevHash, *res.FoundPrevHash)
			}
			// Put the row back as it was.
			_, err = pool.Exec(ctx, `DELETE FROM ledger_entries WHERE height = $1`, tt.height)
			if err == nil {
				err = Insert(ctx, pool, []Entry{orig})
			}
			if err != nil {
				t.Fatal(err)
			}
			if res, _ := Verify(ctx, pool, testSalt, 2, time.Now); !res.Valid {
				t.Fatalf("restored chain invalid: %+v at %v", res, deref(res.BrokenAt))
			}
		})
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func TestVerifyEmptyChain(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	res, err := Verify(context.Background(), pool, testSalt, 0, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || res.Height != 0 || res.HeadHash != GenesisPrevHash {
		t.Fatalf("%+v", res)
	}
}
