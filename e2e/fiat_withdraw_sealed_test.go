package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"
)

// TestWithdrawalDestinationSealed: a withdrawal's destination (an IBAN) is
// kept only sealed; the caller's history and the audit show its hint.
func TestWithdrawalDestinationSealed(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "wd-sealed")
	w := fiatCreateWallet(t, p, u, "KZT")
	fiatDeposit(t, p, fiatSecret(t, p), u, w, 10_000)
	iban := "KZ86125KZT" + strings.ToUpper(ksuid.New().String()[:6]) + "4321"
	r := p.Post(t, "/api/fiat/withdraw", u.Token, map[string]any{"walletId": w, "amount": 1_000, "destination": iban})
	if r.Status != http.StatusCreated {
		t.Fatalf("withdraw: %d %s", r.Status, r.Body)
	}
	wdID := r.JSON(t)["withdrawalId"].(string)
	hist := p.Get(t, "/api/fiat/transactions?limit=200", u.Token)
	if strings.Contains(string(hist.Body), iban) || !strings.Contains(string(hist.Body), `"****4321"`) {
		t.Fatalf("history shows %s", hist.Body)
	}
	pool, err := pgxpool.New(context.Background(), p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx := context.Background()
	var clear int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM fiat_transactions WHERE memo LIKE '%' || $1 || '%')
	     + (SELECT count(*) FROM fiat_audit WHERE detail LIKE '%' || $1 || '%')`, iban).Scan(&clear); err != nil {
		t.Fatal(err)
	}
	if clear != 0 {
		t.Fatalf("the IBAN is in clear in %d rows", clear)
	}
	var sealed, hint, detail string
	if err := pool.QueryRow(ctx, `SELECT destination_sealed, hint FROM fiat_withdrawal_destinations WHERE withdrawal_id = $1`, wdID).
		Scan(&sealed, &hint); err != nil {
		t.Fatalf("sealed destination of %s: %v", wdID, err)
	}
	if !strings.HasPrefix(sealed, "sealed:v1:") || strings.Contains(sealed, iban) || hint != "****4321" {
		t.Fatalf("stored %q %q", sealed, hint)
	}
	if err := pool.QueryRow(ctx, `SELECT a.detail FROM fiat_audit a JOIN fiat_transactions t ON t.id = a.subject
WHERE t.ref_id = $1 AND a.action = 'withdrawal'`, wdID).Scan(&detail); err != nil || detail != "to ****4321" {
		t.Fatalf("audit detail %q %v", detail, err)
	}
}
