package fiat

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/fintech/platform/gateway/auth/authtest"
	"github.com/fintech/platform/schemas"
)

type noStore struct{ Store }
type noVault struct{}

func (noVault) SealText(p, _ string) (string, error) { return p, nil }

// slice builds the fiat slice from the routes Register really declares.
func slice(t *testing.T) map[string]any {
	t.Helper()
	s := servertest.New()
	tokens := authtest.New(t)
	h, err := NewHandlers(Config{PublicBaseURL: "http://localhost", WebhookSecret: "whsec_x", Caps: schemas.FiatCaps{PerTransfer: 1, DailyDeposit: 1, Monthly: 1}},
		noStore{}, servertest.Sender{}, tokens.Authenticator, noVault{}, servertest.Pass, servertest.DB{}, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	// The document is what a client reads: it must encode.
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenAPI: every operation of the slice is declared, with its answers
// per status; the merchant routes authenticate by X-API-Key, not a token.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	doc := slice(t)
	paths := doc["paths"].(map[string]any)
	ops := 0
	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			ops++
			responses := o.(map[string]any)["responses"].(map[string]any)
			if _, generic := responses["2XX"]; generic {
				t.Errorf("%s %s keeps the generic 2XX", method, path)
			}
			if _, ok := responses["500"]; !ok {
				t.Errorf("%s %s: no 500 in %v", method, path, responses)
			}
		}
	}
	if ops != 45 {
		t.Errorf("operations = %d, want 45", ops)
	}
	charge := paths["/api/fiat/merchant/charge"].(map[string]any)["post"].(map[string]any)
	if len(charge["security"].([]any)) != 0 || !hasParam(charge, "X-API-Key", "header") || !hasParam(charge, "Idempotency-Key", "header") {
		t.Fatalf("charge = %v", charge)
	}
	for _, status := range []string{"200", "201", "401", "403", "404", "409", "422"} {
		if _, ok := charge["responses"].(map[string]any)[status]; !ok {
			t.Errorf("charge lacks %s", status)
		}
	}
	refund := paths["/api/fiat/merchant/charges/{id}/refunds"].(map[string]any)["post"].(map[string]any)
	if len(refund["security"].([]any)) != 0 || !hasParam(refund, "X-API-Key", "header") || refund["requestBody"].(map[string]any)["required"] != false {
		t.Fatalf("charge refund = %v", refund)
	}
	request := paths["/api/fiat/requests/{token}/refunds"].(map[string]any)["post"].(map[string]any)
	if len(request["security"].([]any)) != 1 || hasParam(request, "X-API-Key", "header") {
		t.Fatalf("request refund = %v", request)
	}
	view := paths["/api/fiat/requests/{token}"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)
	for _, status := range []string{"200", "404", "410"} {
		content := view[status].(map[string]any)["content"].(map[string]any)
		if content["application/json"] == nil || content["text/html"] == nil {
			t.Errorf("GET /requests/{token} %s: %v", status, content)
		}
	}
	hook := paths["/api/fiat/deposit/webhook"].(map[string]any)["post"].(map[string]any)
	if len(hook["security"].([]any)) != 0 || !hasParam(hook, "Stripe-Signature", "header") || hook["requestBody"] == nil {
		t.Fatalf("webhook = %v", hook)
	}
	freeze := paths["/api/fiat/admin/wallets/{id}/freeze"].(map[string]any)["post"].(map[string]any)
	if freeze["x-required-role"] != adminRole || freeze["requestBody"] != nil || freeze["responses"].(map[string]any)["403"] == nil {
		t.Fatalf("freeze = %v", freeze)
	}
	components := doc["components"].(map[string]any)["schemas"].(map[string]any)
	raw, _ := json.Marshal(components["FiatRefundResult"])
	if !strings.Contains(string(raw), `"integer minor units"`) || !strings.Contains(string(raw), `"^[0-9A-Za-z]{27}$"`) {
		t.Fatalf("FiatRefundResult = %s", raw)
	}
}

func hasParam(op map[string]any, name, in string) bool {
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		if m := p.(map[string]any); m["name"] == name && m["in"] == in {
			return true
		}
	}
	return false
}
