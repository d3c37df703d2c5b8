package openapi

import (
	"net/http"
	"reflect"
	"sort"
	"testing"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

func TestBuild(t *testing.T) {
	t.Parallel()
	routes := []server.Route{
		{Method: http.MethodGet, Path: "/api/mask/masks", Class: ratelimit.Read, Summary: "list"},
		{Method: http.MethodPost, Path: "/api/mask/masks/:id/revoke", Class: ratelimit.Write, Summary: "revoke"},
		{Method: http.MethodPost, Path: "/api/fiat/transfer", Class: ratelimit.Money, Summary: "transfer"},
		{Method: http.MethodGet, Path: "/api/mask/health", Class: ratelimit.Read, Summary: "health"},
		{Method: http.MethodGet, Path: "/api/maskother/x", Class: ratelimit.Read},
	}
	doc := Build(routes, Doc{Title: "Masks", Prefixes: []string{"/api/mask"},
		Public: func(_, p string) bool { return p == "/api/mask/health" }})
	if got, want := SortedPaths(doc), []string{"/api/mask/health", "/api/mask/masks", "/api/mask/masks/{id}/revoke"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("paths = %v, want %v", got, want)
	}
	paths := doc["paths"].(map[string]any)
	revoke := paths["/api/mask/masks/{id}/revoke"].(map[string]any)["post"].(map[string]any)
	if revoke["operationId"] != "postMaskMasksIdRevoke" || revoke["x-rate-limit-class"] != "write" {
		t.Fatalf("revoke op = %v", revoke)
	}
	if len(revoke["parameters"].([]any)) != 1 || revoke["requestBody"] == nil {
		t.Fatalf("revoke params/body = %v", revoke)
	}
	health := paths["/api/mask/health"].(map[string]any)["get"].(map[string]any)
	if len(health["security"].([]any)) != 0 {
		t.Fatalf("public route has security %v", health["security"])
	}

	all := Build(routes, Doc{Title: "All", Prefixes: []string{"/api/mask", "/api/fiat"}})
	transfer := all["paths"].(map[string]any)["/api/fiat/transfer"].(map[string]any)["post"].(map[string]any)
	params := transfer["parameters"].([]any)
	if len(params) != 1 || params[0].(map[string]any)["name"] != "Idempotency-Key" || transfer["tags"].([]string)[0] != "fiat" {
		t.Fatalf("transfer op = %v", transfer)
	}
}

func SortedPaths(doc map[string]any) []string {
	paths, _ := doc["paths"].(map[string]any)
	out := make([]string, 0, len(paths))
	for p := range paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
