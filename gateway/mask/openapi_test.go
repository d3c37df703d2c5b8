package mask

import (
	"testing"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func TestOpenAPI(t *testing.T) {
	t.Parallel()
	routes := []server.Route{
		{Method: "GET", Path: "/api/mask/health", Class: ratelimit.Read, Summary: "health"},
		{Method: "POST", Path: "/api/mask/masks/:id/revoke", Class: ratelimit.Write, Summary: "revoke"},
		{Method: "POST", Path: "/api/mask/charges", Class: ratelimit.Money, Summary: "charge"},
		{Method: "GET", Path: "/api/maskless", Class: ratelimit.Read},
		{Method: "GET", Path: "/api/fiat/wallets", Class: ratelimit.Read},
	}
	doc := OpenAPI(routes, Prefix, publicPaths)
	paths := doc["paths"].(map[string]any)
	if len(paths) != 3 {
		t.Fatalf("paths = %v", paths)
	}
	revoke, ok := paths["/api/mask/masks/{id}/revoke"].(map[string]any)["post"].(map[string]any)
	if !ok {
		t.Fatalf("no revoke operation: %v", paths)
	}
	params := revoke["parameters"].([]any)
	if len(params) != 1 || params[0].(map[string]any)["name"] != "id" {
		t.Fatalf("revoke parameters = %v", params)
	}
	if sec := revoke["security"].([]any); len(sec) != 1 {
		t.Fatalf("revoke security = %v", sec)
	}
	health := paths["/api/mask/health"].(map[string]any)["get"].(map[string]any)
	if sec := health["security"].([]any); len(sec) != 0 {
		t.Fatalf("health security = %v", sec)
	}
	charge := paths["/api/mask/charges"].(map[string]any)["post"].(map[string]any)
	if _, ok := charge["requestBody"]; !ok || charge["operationId"] != "postMaskCharges" {
		t.Fatalf("charge operation = %v", charge)
	}
	if _, ok := charge["responses"].(map[string]any)["402"]; !ok {
		t.Fatalf("charge responses = %v", charge["responses"])
	}
}
