package ledger

import (
	"testing"
	"time"

	"github.com/fintech/platform/gateway/auth/authtest"
	"github.com/fintech/platform/gateway/server/servertest"
)

type noReader struct{ Reader }
type noVerifier struct{ Verifier }
type noStats struct{ Stats }

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	tokens := authtest.New(t)
	h, err := NewHandlers(servertest.DB{}, noReader{}, noVerifier{}, noStats{}, servertest.Sender{}, tokens.Authenticator, time.Now, s.Routes, Config{})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	doc := servertest.Document(t, s, Prefix+"/openapi.json")
	paths := doc["paths"].(map[string]any)
	if len(paths) != 7 {
		t.Fatalf("paths = %v", paths)
	}
	one := paths["/api/ledger/entries/{id}"].(map[string]any)["get"].(map[string]any)
	if params := one["parameters"].([]any); len(params) != 1 || one["security"] == nil || len(one["security"].([]any)) != 0 {
		t.Fatalf("GET entries/{id} = %v", one)
	}
	add := paths["/api/ledger/entries"].(map[string]any)["post"].(map[string]any)
	if sec := add["security"].([]any); len(sec) != 1 {
		t.Fatalf("POST entries security = %v", sec)
	}
	for _, status := range []string{"200", "201", "401", "403", "409", "422"} {
		if _, ok := add["responses"].(map[string]any)[status]; !ok {
			t.Errorf("POST entries lacks %s", status)
		}
	}
	list := paths["/api/ledger/entries"].(map[string]any)["get"].(map[string]any)
	names := map[string]bool{}
	for _, p := range list["parameters"].([]any) {
		names[p.(map[string]any)["name"].(string)] = true
	}
	for _, n := range []string{"cursor", "limit", "kind", "actorUserId", "since"} {
		if !names[n] {
			t.Errorf("GET entries lacks parameter %s: %v", n, names)
		}
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	req := comps["AppendRequest"].(map[string]any)["properties"].(map[string]any)
	if req["amountCents"].(map[string]any)["maximum"] != float64(1e15) || req["kind"].(map[string]any)["maxLength"] != float64(64) {
		t.Errorf("AppendRequest = %v", req)
	}
	if meta := comps["RawObject"].(map[string]any); meta["nullable"] != true || meta["type"] != "object" {
		t.Errorf("RawObject = %v", meta)
	}
	for _, name := range []string{"LedgerEntry", "LedgerEntryInChain", "LedgerHead", "LedgerVerifyResult", "LedgerStats", "LedgerEntryPage", "Health"} {
		if _, ok := comps[name]; !ok {
			t.Errorf("no %s among %v", name, comps)
		}
	}
}
