package charity

import (
	"testing"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func TestOpenAPI(t *testing.T) {
	t.Parallel()
	routes := []server.Route{
		{Method: "GET", Path: Prefix + "/campaigns/:id", Class: ratelimit.Read, Summary: "read"},
		{Method: "POST", Path: Prefix + "/campaigns/:id/donations", Class: ratelimit.Money, Summary: "donate"},
		{Method: "POST", Path: Prefix + "/campaigns/:id/approve", Class: ratelimit.Write, Summary: "approve"},
		{Method: "GET", Path: "/api/fiat/wallets", Class: ratelimit.Read},
	}
	doc := OpenAPI(routes)
	paths := doc["paths"].(map[string]any)
	if len(paths) != 3 {
		t.Fatalf("paths = %v", paths)
	}
	read := paths[Prefix+"/campaigns/{id}"].(map[string]any)["get"].(map[string]any)
	if sec := read["security"].([]any); len(sec) != 0 {
		t.Fatalf("a campaign read needs no token: %v", sec)
	}
	donate := paths[Prefix+"/campaigns/{id}/donations"].(map[string]any)["post"].(map[string]any)
	params := donate["parameters"].([]any)
	if len(params) != 2 || params[1].(map[string]any)["name"] != "Idempotency-Key" {
		t.Fatalf("donate parameters = %v", params)
	}
	for _, code := range []string{"201", "400", "401", "404", "409", "422"} {
		if _, ok := donate["responses"].(map[string]any)[code]; !ok {
			t.Fatalf("donate lacks %s: %v", code, donate["responses"])
		}
	}
	approve := paths[Prefix+"/campaigns/{id}/approve"].(map[string]any)["post"].(map[string]any)
	if body := approve["requestBody"].(map[string]any); body["required"] != false {
		t.Fatalf("the approve body is optional: %v", body)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"Campaign", "Donation", "Error"} {
		if _, ok := schemas[name]; !ok {
			t.Fatalf("no %s schema", name)
		}
	}
	if _, ok := schemas["Stats"]; ok {
		t.Fatal("Stats is listed though no route of these answers it")
	}
}
