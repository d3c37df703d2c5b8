package trade

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"
)

type noAccounts struct{ Accounts }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	h, err := NewHandlers(noAccounts{}, servertest.Sender{}, servertest.DB{}, servertest.Pass, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 8 {
		t.Fatalf("paths = %d: %v", len(paths), paths)
	}
	tr := paths["/api/trade/transfer"].(map[string]any)["post"].(map[string]any)
	resp := tr["responses"].(map[string]any)
	for _, code := range []string{"201", "400", "401", "404", "409", "422"} {
		if _, ok := resp[code]; !ok {
			t.Fatalf("transfer responses lack %s: %v", code, resp)
		}
	}
	if _, ok := tr["requestBody"]; !ok {
		t.Fatal("transfer has no request body")
	}
	health := paths["/api/trade/health"].(map[string]any)["get"].(map[string]any)
	if sec := health["security"].([]any); len(sec) != 0 {
		t.Fatalf("health security = %v", sec)
	}
	csv := paths["/api/trade/operations.csv"].(map[string]any)["get"].(map[string]any)
	ok := csv["responses"].(map[string]any)["200"].(map[string]any)
	if _, has := ok["content"].(map[string]any)["text/csv"]; !has {
		t.Fatalf("operations.csv 200 = %v", ok)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	amount := schemas["TopUpRequest"].(map[string]any)["properties"].(map[string]any)["amount"].(map[string]any)
	if amount["type"] != "number" || amount["maximum"] != float64(10000) || amount["exclusiveMinimum"] != true {
		t.Fatalf("top-up amount = %v", amount)
	}
	op := schemas["TradeOperation"].(map[string]any)["properties"].(map[string]any)
	if op["amount"].(map[string]any)["type"] != "number" || len(op["kind"].(map[string]any)["enum"].([]any)) != 2 {
		t.Fatalf("TradeOperation = %v", op)
	}
}
