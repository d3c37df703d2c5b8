package e2e

import (
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// TestTradeCSVLarge exports 100k operations: the export streams from the
// database cursor (chunked, never the whole history in memory), every row is
// well-formed RFC 4180 with the exact decimal amount, and the header is
// exactly id,kind,amount,from,to,createdAt with no BOM.
func TestTradeCSVLarge(t *testing.T) {
	p := shared(t)
	u, other := p.Register(t, "trade-csv"), p.Register(t, "trade-csv2")
	a, b := tradeAccount(t, p, u), tradeAccount(t, p, other)
	const rows = 100_000
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	now := time.Now().UTC()
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"trade_operations"},
		[]string{"id", "kind", "amount", "from_account", "to_account", "created_at"},
		pgx.CopyFromSlice(rows, func(i int) ([]any, error) {
			if i%2 == 0 {
				return []any{schemas.NewID(), "topup", int64(i + 1), nil, a, now}, nil
			}
			return []any{schemas.NewID(), "transfer", int64(i + 1), b, a, now}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequest(http.MethodGet, p.BaseURL+"/api/trade/operations.csv", nil)
	req.Header.Set("Authorization", "Bearer "+u.Token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("csv: %d", resp.StatusCode)
	}
	if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("not streamed: transfer encoding %v, length %d", resp.TransferEncoding, resp.ContentLength)
	}
	r := csv.NewReader(resp.Body)
	n := 0
	seen := map[string]bool{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", n, err)
		}
		if n == 0 {
			if len(rec) != 6 || rec[0] != "id" || rec[1] != "kind" || rec[2] != "amount" || rec[3] != "from" || rec[4] != "to" || rec[5] != "createdAt" {
				t.Fatalf("header %q", rec)
			}
		} else {
			units := tnuUnits(t, rec[2])
			if units < 1 || units > rows || seen[rec[0]] || rec[4] != a || (rec[1] == "topup") != (rec[3] == "") {
				t.Fatalf("row %d = %q", n, rec)
			}
			seen[rec[0]] = true
		}
		n++
	}
	if n != rows+1 {
		t.Fatalf("got %d records, want %d", n, rows+1)
	}
	t.Logf("streamed %d rows in %s", rows, time.Since(start))
}
