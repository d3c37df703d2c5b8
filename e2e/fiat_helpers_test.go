package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/ksuid"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/fintech/platform/e2e/harness"
)

// fiatSecret reads the processor webhook secret the platform generated.
func fiatSecret(t testing.TB, p *harness.Platform) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.DataDir, "secrets", "processor_webhook_secret"))
	if err != nil {
		t.Fatalf("read webhook secret: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// fiatEvent builds a Stripe payment_intent.succeeded event for a deposit.
func fiatEvent(t testing.TB, eventID, depositID string, amount int64, currency string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"id": eventID, "object": "event", "type": "payment_intent.succeeded", "api_version": "2024-06-20",
		"created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{
			"id": "pi_" + depositID, "object": "payment_intent", "amount": amount, "currency": currency,
			"status": "succeeded", "metadata": map[string]string{"depositId": depositID},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fiatSignedWebhook posts a payload to the deposit webhook signed with secret.
func fiatSignedWebhook(t testing.TB, p *harness.Platform, secret string, payload []byte) harness.Response {
	t.Helper()
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret})
	return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/deposit/webhook", Body: payload,
		Headers: map[string]string{"Stripe-Signature": signed.Header}})
}

func fiatCreateWallet(t testing.TB, p *harness.Platform, u harness.User, currency string) string {
	t.Helper()
	r := p.Post(t, "/api/fiat/wallets", u.Token, map[string]string{"currency": currency})
	if r.Status != http.StatusCreated {
		t.Fatalf("create wallet: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// fiatDeposit tops a wallet up through the signed processor webhook.
func fiatDeposit(t testing.TB, p *harness.Platform, secret string, u harness.User, walletID string, amount int64) string {
	t.Helper()
	r := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": walletID, "amount": amount})
	if r.Status != http.StatusCreated {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	dep := r.JSON(t)
	id := dep["depositId"].(string)
	ev := fiatEvent(t, "evt_"+ksuid.New().String(), id, amount, "kzt")
	if w := fiatSignedWebhook(t, p, secret, ev); w.Status != http.StatusOK {
		t.Fatalf("webhook: %d %s", w.Status, w.Body)
	}
	return id
}

func fiatBalance(t testing.TB, p *harness.Platform, u harness.User, walletID string) int64 {
	t.Helper()
	r := p.Get(t, "/api/fiat/wallets", u.Token)
	if r.Status != http.StatusOK {
		t.Fatalf("wallets: %d %s", r.Status, r.Body)
	}
	var out struct {
		Items []struct {
			ID      string `json:"id"`
			Balance int64  `json:"balance"`
		} `json:"items"`
	}
	r.Decode(t, &out)
	for _, w := range out.Items {
		if w.ID == walletID {
			return w.Balance
		}
	}
	t.Fatalf("wallet %s not listed: %s", walletID, r.Body)
	return 0
}

// fiatHistory pages through the user's whole history and returns the
// transaction ids in order.
func fiatHistory(t testing.TB, p *harness.Platform, u harness.User) []string {
	t.Helper()
	return pagedHistory(t, p, u.Token, 200)
}
