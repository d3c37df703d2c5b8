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

// A transfer (and the deposit and withdrawal around it) lands in the ledger
// as fiat entries whose sourceId is the transaction id, and in reputation as
// the spec's weights, through the fire-and-forget emissions of the fiat
// module.
func TestLedgerFiatEmissions(t *testing.T) {
	p := shared(t)
	alice := p.Register(t, "lf-alice")
	bob := p.Register(t, "lf-bob")

	r := p.Post(t, "/api/fiat/wallets", alice.Token, map[string]string{"currency": "KZT"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create wallet: %d %s", r.Status, r.Body)
	}
	wallet := r.JSON(t)["id"].(string)

	// Deposit through the processor's signed webhook.
	r = p.Post(t, "/api/fiat/deposit", alice.Token, map[string]any{"walletId": wallet, "amount": 500_000})
	if r.Status != http.StatusCreated {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	depositID := r.JSON(t)["depositId"].(string)
	secret, err := os.ReadFile(filepath.Join(p.DataDir, "secrets", "processor_webhook_secret"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{
		"id": "evt_" + ksuid.New().String(), "object": "event", "type": "payment_intent.succeeded",
		"api_version": "2024-06-20", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{"id": "pi_" + depositID, "object": "payment_intent",
			"amount": 500_000, "currency": "kzt", "status": "succeeded", "metadata": map[string]string{"depositId": depositID}}},
	})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: strings.TrimSpace(string(secret))})
	if w := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/deposit/webhook", Body: payload,
		Headers: map[string]string{"Stripe-Signature": signed.Header}}); w.Status != http.StatusOK {
		t.Fatalf("deposit webhook: %d %s", w.Status, w.Body)
	}

	r = p.Post(t, "/api/fiat/transfer", alice.Token, map[string]any{"fromWalletId": wallet, "toEmail": bob.Email, "amountKzt": 100_000, "memo": "lf"})
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("transfer: %d %s", r.Status, r.Body)
	}
	txID := r.JSON(t)["transactionId"].(string)

	r = p.Post(t, "/api/fiat/withdraw", alice.Token, map[string]any{"walletId": wallet, "amount": 10_000, "destination": "KZ00-TEST"})
	if r.Status != http.StatusCreated {
		t.Fatalf("withdraw: %d %s", r.Status, r.Body)
	}
	wdTx := r.JSON(t)["transactionId"].(string)

	entries := func() map[string]map[string]any {
		r := p.Get(t, "/api/ledger/entries?actorUserId="+alice.ID, "")
		var page struct {
			Items []map[string]any `json:"items"`
		}
		r.Decode(t, &page)
		out := map[string]map[string]any{}
		for _, e := range page.Items {
			out[e["kind"].(string)] = e
		}
		return out
	}
	harness.Eventually(t, 20*time.Second, "fiat ledger entries", func() bool {
		es := entries()
		return es["fiat:deposit"] != nil && es["fiat:transfer"] != nil && es["fiat:withdrawal"] != nil
	})
	es := entries()
	if tr := es["fiat:transfer"]; tr["sourceId"] != txID || tr["amountCents"].(float64) != 100_000 {
		t.Fatalf("transfer entry: %v", tr)
	}
	if wd := es["fiat:withdrawal"]; wd["sourceId"] != wdTx {
		t.Fatalf("withdrawal entry: %v", wd)
	}
	score := func(u harness.User) float64 {
		return p.Get(t, "/api/reputation/rank/"+u.ID, "").JSON(t)["score"].(float64)
	}
	// alice: deposit +2, transfer +1, withdrawal +3; bob: transfer +1.
	harness.Eventually(t, 20*time.Second, "reputation from fiat", func() bool {
		return score(alice) == 6 && score(bob) == 1
	})
	if v := p.Get(t, "/api/ledger/chain/verify", "").JSON(t); v["valid"] != true {
		t.Fatalf("verify: %v", v)
	}
}
