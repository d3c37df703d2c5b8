package mask

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"
)

type noReader struct{ Reader }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	h, err := NewHandlers(noReader{}, servertest.Sender{}, servertest.DB{}, servertest.Pass, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 6 {
		t.Fatalf("paths = %v", paths)
	}
	revoke := paths["/api/mask/masks/{id}/revoke"].(map[string]any)["post"].(map[string]any)
	params := revoke["parameters"].([]any)
	if len(params) != 1 || params[0].(map[string]any)["name"] != "id" || params[0].(map[string]any)["schema"].(map[string]any)["pattern"] == nil {
		t.Fatalf("revoke parameters = %v", params)
	}
	if _, ok := revoke["requestBody"]; ok {
		t.Fatalf("revoke has a body: %v", revoke)
	}
	if sec := revoke["security"].([]any); len(sec) != 1 {
		t.Fatalf("revoke security = %v", sec)
	}
	health := paths["/api/mask/health"].(map[string]any)["get"].(map[string]any)
	if sec := health["security"].([]any); len(sec) != 0 {
		t.Fatalf("health security = %v", sec)
	}
	charge := paths["/api/mask/charges"].(map[string]any)["post"].(map[string]any)
	if charge["operationId"] != "postMaskCharges" || charge["requestBody"].(map[string]any)["required"] != true {
		t.Fatalf("charge operation = %v", charge)
	}
	responses := charge["responses"].(map[string]any)
	for _, status := range []string{"200", "201", "402", "404", "422", "503"} {
		if _, ok := responses[status]; !ok {
			t.Fatalf("charge responses lack %s: %v", status, responses)
		}
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	request := schemas["CreateChargeRequest"].(map[string]any)
	amount := request["properties"].(map[string]any)["amountCents"].(map[string]any)
	if amount["minimum"] != float64(1) || amount["maximum"] != float64(1e15) || amount["type"] != "integer" {
		t.Fatalf("amountCents = %v", amount)
	}
	mask := schemas["Mask"].(map[string]any)["properties"].(map[string]any)
	if mask["id"].(map[string]any)["pattern"] != "^[0-9A-Za-z]{27}$" {
		t.Fatalf("Mask.id = %v", mask["id"])
	}
	if _, ok := schemas["MaskPage"]; !ok {
		t.Fatalf("no MaskPage among %v", schemas)
	}
}

// BenchmarkOpenAPI builds the mask slice from the registered declarations.
func BenchmarkOpenAPI(b *testing.B) {
	s := servertest.New()
	h, err := NewHandlers(noReader{}, servertest.Sender{}, servertest.DB{}, servertest.Pass, time.Now, s.Routes)
	if err != nil {
		b.Fatal(err)
	}
	h.Register(s.Root())
	for b.Loop() {
		servertest.Document(b, s, Prefix+"/openapi.json")
	}
}
