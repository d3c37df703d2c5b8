package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/fintech/platform/e2e/harness"
)

func TestFiatBadInput(t *testing.T) {
	p := shared(t)
	secret := fiatSecret(t, p)
	u := p.Register(t, "fiat-bad")
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	w := fiatCreateWallet(t, p, u, "KZT")

	old := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: fiatEvent(t, "evt_old", "x", 1, "kzt"),
		Secret: secret, Timestamp: time.Now().Add(-10 * time.Minute)})
	notEvent := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(`not json`), Secret: secret})
	unknownDep := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: fiatEvent(t, "evt_u", "nope", 1, "kzt"), Secret: secret})
	otherType := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: []byte(`{"id":"evt_c","object":"event","type":"charge.refunded","data":{"object":{}}}`), Secret: secret})

	tests := []struct {
		name   string
		req    harness.Request
		status int
		code   string
	}{
		{"transfer without content type", harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: u.Token,
			Body: `{"fromWalletId":"x"}`, Headers: map[string]string{"Content-Type": "text/plain"}}, 400, "content_type_required"},
		{"webhook too old", harness.Request{Method: "POST", Path: "/api/fiat/deposit/webhook", Body: old.Payload,
			Headers: map[string]string{"Stripe-Signature": old.Header}}, 400, "signature_invalid"},
		{"webhook garbage header", harness.Request{Method: "POST", Path: "/api/fiat/processor/webhook", Body: old.Payload,
			Headers: map[string]string{"Stripe-Signature": "garbage"}}, 400, "signature_invalid"},
		{"webhook signed non-event", harness.Request{Method: "POST", Path: "/api/fiat/deposit/webhook", Body: notEvent.Payload,
			Headers: map[string]string{"Stripe-Signature": notEvent.Header}}, 400, "invalid_event"},
		{"webhook unknown deposit", harness.Request{Method: "POST", Path: "/api/fiat/deposit/webhook", Body: unknownDep.Payload,
			Headers: map[string]string{"Stripe-Signature": unknownDep.Header}}, 404, "deposit_not_found"},
		{"webhook other event type", harness.Request{Method: "POST", Path: "/api/fiat/deposit/webhook", Body: otherType.Payload,
			Headers: map[string]string{"Stripe-Signature": otherType.Header}}, 200, ""},
		{"verify non-JSON payload", harness.Request{Method: "POST", Path: "/api/fiat/processor/verify", Token: u.Token,
			Body: map[string]string{"event_id": "e", "event_type": "t", "raw_payload": "x", "processor_signature": "s"}}, 400, "invalid_event"},
		{"bad cursor", harness.Request{Method: "GET", Path: "/api/fiat/transactions?cursor=%25%25", Token: u.Token}, 400, "invalid_cursor"},
		{"zero limit", harness.Request{Method: "GET", Path: "/api/fiat/transactions?limit=0", Token: u.Token}, 422, "validation_failed"},
		{"huge limit clamps", harness.Request{Method: "GET", Path: "/api/fiat/transactions?limit=100000", Token: u.Token}, 200, ""},
		{"deposit string amount", harness.Request{Method: "POST", Path: "/api/fiat/deposit", Token: u.Token,
			Body: map[string]any{"walletId": w, "amount": "abc"}}, 422, "validation_failed"},
		{"deposit unknown wallet", harness.Request{Method: "POST", Path: "/api/fiat/deposit", Token: u.Token,
			Body: map[string]any{"walletId": "nope", "amount": 5}}, 404, "wallet_not_found"},
		{"deposit missing wallet", harness.Request{Method: "POST", Path: "/api/fiat/deposit", Token: u.Token,
			Body: map[string]any{"amount": 5}}, 422, "validation_failed"},
		{"withdraw insufficient", harness.Request{Method: "POST", Path: "/api/fiat/withdraw", Token: u.Token,
			Body: map[string]any{"walletId": w, "amount": 5, "destination": "d"}}, 400, "insufficient_balance"},
		{"withdraw oversized", harness.Request{Method: "POST", Path: "/api/fiat/withdraw", Token: u.Token,
			Body: map[string]any{"walletId": w, "amount": 1e16, "destination": "d"}}, 422, "validation_failed"},
		{"payout no bank account", harness.Request{Method: "POST", Path: "/api/fiat/payouts", Token: u.Token,
			Body: map[string]any{"walletId": w, "amount": 5}}, 422, "validation_failed"},
		{"long idempotency key", harness.Request{Method: "POST", Path: "/api/fiat/withdraw", Token: u.Token,
			Body: map[string]any{"walletId": w, "amount": 5, "destination": "d"}, Headers: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)}}, 422, "validation_failed"},
		{"freeze unknown", harness.Request{Method: "POST", Path: "/api/fiat/admin/wallets/nope/freeze", Token: admin.Token, Body: map[string]any{}}, 404, "wallet_not_found"},
		{"freeze as user", harness.Request{Method: "POST", Path: "/api/fiat/admin/wallets/" + w + "/freeze", Token: u.Token, Body: map[string]any{}}, 403, "forbidden"},
		{"kyc approve unknown", harness.Request{Method: "POST", Path: "/api/fiat/admin/kyc/nope/approve", Token: admin.Token, Body: map[string]any{}}, 404, "kyc_not_found"},
		{"payout approve unknown", harness.Request{Method: "POST", Path: "/api/fiat/admin/payouts/nope/approve", Token: admin.Token, Body: map[string]any{}}, 404, "payout_not_found"},
		{"checkout unknown", harness.Request{Method: "GET", Path: "/api/fiat/checkout/nope"}, 404, "session_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Do(t, tt.req)
			if r.Status != tt.status {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
			if tt.code != "" && r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %s, want %s", r.Body, tt.code)
			}
		})
	}

	// No body a client can send to any fiat write gets a 5xx.
	doc := p.Get(t, "/api/fiat/openapi.json", "")
	var spec struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(doc.Body, &spec); err != nil {
		t.Fatal(err)
	}
	bodies := []any{[]byte(`[]`), []byte(`null`), []byte(`{"amount":{},"walletId":[1]}`), []byte(`{"amountKzt":-1,"currency":7}`),
		[]byte(`{"walletId":"` + w + `","amount":1e400}`), []byte(`"x"`), []byte(`{"raw_payload":{},"event_id":1}`)}
	// The fiat wallet routes of this module (other modules also mount
	// routes under /api/fiat; their own tests cover them).
	own := map[string]bool{"/api/fiat/wallets": true, "/api/fiat/deposit/checkout": true, "/api/fiat/deposit": true,
		"/api/fiat/deposit/webhook": true, "/api/fiat/processor/webhook": true, "/api/fiat/processor/verify": true,
		"/api/fiat/checkout/{sessionId}/pay": true, "/api/fiat/transfer": true, "/api/fiat/withdraw": true,
		"/api/fiat/payouts": true, "/api/fiat/kyc/submit": true, "/api/fiat/admin/wallets/{id}/freeze": true,
		"/api/fiat/admin/wallets/{id}/unfreeze": true, "/api/fiat/admin/payouts/{id}/approve": true,
		"/api/fiat/admin/payouts/{id}/reject": true, "/api/fiat/admin/kyc/{id}/approve": true, "/api/fiat/admin/kyc/{id}/reject": true}
	for path := range own {
		if _, ok := spec.Paths[path]["post"]; !ok {
			t.Errorf("openapi lacks POST %s", path)
		}
	}
	for path, ops := range spec.Paths {
		if _, ok := ops["post"]; !ok || !own[path] {
			continue
		}
		concrete := strings.NewReplacer("{id}", "nope", "{sessionId}", "nope", "{token}", "nope").Replace(path)
		for _, b := range bodies {
			for _, tok := range []string{u.Token, admin.Token} {
				r := p.Do(t, harness.Request{Method: http.MethodPost, Path: concrete, Token: tok, Body: b})
				if r.Status >= 500 {
					t.Errorf("POST %s %s: %d %s", concrete, b, r.Status, r.Body)
				}
			}
		}
	}
}
