package ledger

import (
	"testing"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func TestOpenAPIDoc(t *testing.T) {
	t.Parallel()
	doc := openapi.Build([]server.Route{
		{Method: "GET", Path: "/api/ledger/entries/:id", Class: ratelimit.Read, Summary: "one"},
		{Method: "POST", Path: "/api/ledger/entries", Class: ratelimit.Write, Summary: "add"},
		{Method: "GET", Path: "/api/ledger/entries", Class: ratelimit.Read, Summary: "list"},
		{Method: "GET", Path: "/api/ledgerx/other", Class: ratelimit.Read},
		{Method: "GET", Path: "/api/fiat/wallets", Class: ratelimit.Read},
	}, openAPIDoc)
	paths := doc["paths"].(map[string]any)
	if len(paths) != 2 {
		t.Fatalf("paths: %v", paths)
	}
	one := paths["/api/ledger/entries/{id}"].(map[string]any)["get"].(map[string]any)
	if one["summary"] != "one" || len(one["parameters"].([]any)) != 1 {
		t.Fatalf("param route: %v", one)
	}
	if len(paths["/api/ledger/entries"].(map[string]any)) != 2 {
		t.Fatalf("methods of /entries: %v", paths["/api/ledger/entries"])
	}
}
