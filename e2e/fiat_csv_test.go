package e2e

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// TestFiatCSVLarge exports 100k transactions: the export streams (the
// handler never holds the rows) and is well-formed RFC 4180.
func TestFiatCSVLarge(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "fiat-csv")
	w := fiatCreateWallet(t, p, u, "KZT")
	const rows = 100_000
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	now := time.Now().UTC()
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"fiat_transactions"},
		[]string{"id", "kind", "status", "from_wallet", "to_wallet", "from_user", "to_user", "amount", "fee", "currency", "memo", "created_at"},
		pgx.CopyFromSlice(rows, func(i int) ([]any, error) {
			return []any{schemas.NewID(), "transfer", "completed", w, "other", u.ID, "other-user", int64(i + 1), int64(1),
				"KZT", fmt.Sprintf("memo, \"quoted\" %d\nline", i), now}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequest(http.MethodGet, p.BaseURL+"/api/fiat/transactions.csv", nil)
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
	r := csv.NewReader(resp.Body)
	n := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", n, err)
		}
		if n > 0 && (len(rec) != 11 || rec[10][:6] != "memo, ") {
			t.Fatalf("row %d = %q", n, rec)
		}
		n++
	}
	if n != rows+1 {
		t.Fatalf("got %d records, want %d", n, rows+1)
	}
	t.Logf("streamed %d rows in %s (chunked: %v)", rows, time.Since(start), resp.TransferEncoding)
}
