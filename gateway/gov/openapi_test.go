package gov

import (
	"testing"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func TestOpenAPI(t *testing.T) {
	t.Parallel()
	routes := []server.Route{
		{Method: "GET", Path: Prefix + "/health", Class: ratelimit.Read, Summary: "health"},
		{Method: "POST", Path: Prefix + "/proposals/:id/votes", Class: ratelimit.Write, Summary: "vote"},
		{Method: "GET", Path: Prefix + "/proposals/:id/votes", Class: ratelimit.Read, Summary: "votes"},
		{Method: "POST", Path: Prefix + "/proposals/:id/close", Class: ratelimit.Write, Summary: "close"},
		{Method: "GET", Path: "/api/governance", Class: ratelimit.Read},
		{Method: "GET", Path: "/api/fiat/wallets", Class: ratelimit.Read},
	}
	paths := OpenAPI(routes)["paths"].(map[string]any)
	if len(paths) != 3 {
		t.Fatalf("paths = %v", paths)
	}
	votes := paths["/api/gov/proposals/{id}/votes"].(map[string]any)
	post := votes["post"].(map[string]any)
	if _, ok := post["requestBody"]; !ok || len(post["security"].([]any)) != 1 {
		t.Fatalf("vote operation = %v", post)
	}
	for _, code := range []string{"201", "401", "404", "409", "422"} {
		if _, ok := post["responses"].(map[string]any)[code]; !ok {
			t.Errorf("vote lacks %s", code)
		}
	}
	get := votes["get"].(map[string]any)
	if len(get["security"].([]any)) != 0 || get["responses"].(map[string]any)["409"] == nil {
		t.Fatalf("votes list = %v", get)
	}
	closeOp := paths["/api/gov/proposals/{id}/close"].(map[string]any)["post"].(map[string]any)
	if closeOp["responses"].(map[string]any)["403"] == nil {
		t.Fatalf("close = %v", closeOp)
	}
}
