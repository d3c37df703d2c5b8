package trade

import (
	"testing"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func TestOpenAPI(t *testing.T) {
	t.Parallel()
	routes := []server.Route{
		{Method: "GET", Path: "/api/trade/health", Class: ratelimit.Read, Summary: "health"},
		{Method: "POST", Path: "/api/trade/transfer", Class: ratelimit.Money, Summary: "transfer"},
		{Method: "GET", Path: "/api/trade/operations", Class: ratelimit.Read, Summary: "operations"},
		{Method: "GET", Path: "/api/mask/masks", Class: ratelimit.Read},
	}
	doc := OpenAPI(routes, Prefix, publicPaths)
	paths := doc["paths"].(map[string]any)
	if len(paths) != 3 {
		t.Fatalf("paths = %v", paths)
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
}
