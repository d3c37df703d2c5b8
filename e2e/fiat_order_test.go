package e2e

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestFiatHistoryExactOrderWithinASecond: transfers made within the same
// second (where a ksuid says nothing about order) list newest first in
// exactly the order they were made, across pages (issue 25).
func TestFiatHistoryExactOrderWithinASecond(t *testing.T) {
	p := shared(t)
	secret := fiatSecret(t, p)
	alice, bob := p.Register(t, "order-a"), p.Register(t, "order-b")
	aw := fiatCreateWallet(t, p, alice, "KZT")
	fiatDeposit(t, p, secret, alice, aw, 1_000_000)
	var made []string
	start := time.Now()
	for i := 0; i < 50; i++ {
		r := p.Post(t, "/api/fiat/transfer", alice.Token, map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 10 + i})
		if r.Status != http.StatusOK {
			t.Fatalf("transfer %d: %d %s", i, r.Status, r.Body)
		}
		made = append(made, r.JSON(t)["transactionId"].(string))
	}
	t.Logf("50 transfers in %s", time.Since(start))
	for _, u := range []struct {
		name string
		ids  []string
	}{{"sender", pagedHistory(t, p, alice.Token, 7)}, {"recipient", pagedHistory(t, p, bob.Token, 7)}} {
		var transfers []string
		for _, id := range u.ids {
			for _, m := range made {
				if id == m {
					transfers = append(transfers, id)
				}
			}
		}
		if len(transfers) != len(made) {
			t.Fatalf("%s lists %d of the %d transfers", u.name, len(transfers), len(made))
		}
		for i, id := range transfers {
			if want := made[len(made)-1-i]; id != want {
				t.Fatalf("%s: position %d is %s, want %s (newest first in creation order)", u.name, i, id, want)
			}
		}
	}
}

// pagedHistory pages through a user's history, limit at a time, and
// returns the ids in the order listed.
func pagedHistory(t testing.TB, p *harness.Platform, token string, limit int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for pages := 0; pages < 100; pages++ {
		path := "/api/fiat/transactions?limit=" + strconv.Itoa(limit)
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := p.Get(t, path, token)
		if r.Status != http.StatusOK {
			t.Fatalf("transactions: %d %s", r.Status, r.Body)
		}
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			NextCursor *string `json:"nextCursor"`
		}
		r.Decode(t, &page)
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.NextCursor == nil {
			return ids
		}
		cursor = *page.NextCursor
	}
	t.Fatal("history did not end within 100 pages")
	return nil
}
