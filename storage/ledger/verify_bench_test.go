package ledger

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres/pgtest"
)

// BenchmarkVerify1M times Verify over a valid chain of 1,000,000 entries,
// generated in Go (real hashes) and loaded with COPY.
//
//	go test ./storage/ledger -run XXX -bench Verify1M -benchtime 3x
func BenchmarkVerify1M(b *testing.B) {
	const n = 1_000_000
	pool, _ := pgtest.NewDB(b)
	ctx := context.Background()
	start := time.Now()
	prev := GenesisPrevHash
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	_, err := pool.CopyFrom(ctx, pgx.Identifier{"ledger_entries"}, insertColumns, pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		amt := int64(i*10 + 1)
		e := Entry{ID: fmt.Sprintf("e%07d", i+1), Height: int64(i + 1), Kind: []string{"fiat:transfer", "mask:charge", "fiat:deposit"}[i%3],
			ActorUserID: fmt.Sprintf("2K%025d", i%9973), SourceID: fmt.Sprintf("2S%025d", i+1), AmountCents: &amt, Currency: "KZT",
			Timestamp: ts.Add(time.Duration(i) * time.Millisecond), PrevHash: prev}
		if i%4 == 0 {
			e.Meta = []byte(fmt.Sprintf(`{"feeKzt":%d,"toWallet":"w-%d"}`, i%1000+1, i))
		}
		e.Hash = e.ComputeHash(testSalt)
		prev = e.Hash
		i++
		var meta *string
		if e.Meta != nil {
			m := string(e.Meta)
			meta = &m
		}
		return []any{e.Height, e.ID, e.Kind, e.SourceID, e.ActorUserID, e.AmountCents,
			e.Currency, meta, e.Timestamp, e.PrevHash, e.Hash}, nil
	}))
	if err != nil {
		b.Fatalf("load chain: %v", err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE ledger_entries`); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated and loaded %d entries in %s", n, time.Since(start).Round(time.Millisecond))
	b.ResetTimer()
	for range b.N {
		res, err := Verify(ctx, pool, testSalt, 0, time.Now)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Valid || res.Height != n {
			b.Fatalf("chain invalid: %+v", res)
		}
		b.ReportMetric(float64(res.MsToVerify), "ms/verify")
	}
}
