package openapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

func TestBuild(t *testing.T) {
	t.Parallel()
	routes := []server.Route{
		{Method: http.MethodGet, Path: "/api/mask/masks", Class: ratelimit.Read, Summary: "list"},
		{Method: http.MethodPost, Path: "/api/mask/masks/:id/revoke", Class: ratelimit.Write, Summary: "revoke"},
		{Method: http.MethodPost, Path: "/api/fiat/transfer", Class: ratelimit.Money, Summary: "transfer"},
		{Method: http.MethodGet, Path: "/api/mask/health", Class: ratelimit.Read, Summary: "health", Decl: &server.Declaration{Public: true}},
		{Method: http.MethodGet, Path: "/api/maskother/x", Class: ratelimit.Read},
	}
	doc := Build(routes, Doc{Title: "Masks", Prefixes: []string{"/api/mask"}})
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

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"not_found":                                  {"not_found"},
		"voting_closed or already_voted":             {"voting_closed", "already_voted"},
		"invalid_json, content_type_required or x_y": {"invalid_json", "content_type_required", "x_y"},
		"validation_failed: unknown status":          {"validation_failed"},
		"internal: the answer carries the requestId": {"internal"},
		"database unreachable":                       nil,
		"the caller's masks":                         nil,
		"OK":                                         nil,
	}
	for in, want := range cases {
		if got := ErrorCodes(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ErrorCodes(%q) = %v, want %v", in, got, want)
		}
	}
}

type closeRequest struct {
	ID   string `path:"id" json:"-"`
	Memo string `json:"memo"`
}

type thing struct {
	Name string `json:"name"`
}

type thingsRequest struct{ bind.Paging }

type pageRequest struct {
	ID string `path:"id" json:"-"`
}

func TestBuildCompletesAnswersAndPrunes(t *testing.T) {
	t.Parallel()
	declare := func(request any, responses ...server.Response) *server.Declaration {
		return &server.Declaration{Request: request, Responses: responses}
	}
	routes := []server.Route{
		{Method: http.MethodPost, Path: "/api/x/things/:id/close", Class: ratelimit.Write,
			Decl: declare(new(closeRequest), server.Answers(200, "ok", thing{}), server.Fails(404, "thing_missing"))},
		{Method: http.MethodGet, Path: "/api/x/things", Class: ratelimit.Read,
			Decl: declare(new(thingsRequest), server.Answers(200, "page", schemas.Page[thing]{}))},
		{Method: http.MethodGet, Path: "/x/pages/:id", Class: ratelimit.Read,
			Decl: declare(new(pageRequest), server.Response{Status: 200, Description: "page", ContentType: "text/html"})},
	}
	doc := Build(routes, Doc{Title: "X", Prefixes: []string{"/api/x", "/x"}})
	paths := doc["paths"].(map[string]any)
	closeOp := paths["/api/x/things/{id}/close"].(map[string]any)["post"].(map[string]any)
	resp := closeOp["responses"].(map[string]any)
	for _, status := range []string{"200", "400", "401", "404", "422", "429", "500", "503"} {
		if resp[status] == nil {
			t.Errorf("close lacks %s: %v", status, resp)
		}
	}
	if got := errorProperty(resp["404"].(map[string]any))["enum"]; !reflect.DeepEqual(got, []string{"thing_missing", "not_found"}) {
		t.Errorf("404 codes = %v", got)
	}
	list := paths["/api/x/things"].(map[string]any)["get"].(map[string]any)
	if got := errorProperty(list["responses"].(map[string]any)["400"].(map[string]any))["enum"]; !reflect.DeepEqual(got, []string{"invalid_cursor"}) {
		t.Errorf("paged read 400 codes = %v, want invalid_cursor only (a GET has no body: no payload_too_large)", got)
	}
	if !hasParam(list, "cursor") {
		t.Errorf("paged read has no cursor parameter: %v", list["parameters"])
	}
	page := paths["/x/pages/{id}"].(map[string]any)["get"].(map[string]any)
	if page["operationId"] != "getSiteXPagesId" || closeOp["operationId"] != "postXThingsIdClose" {
		t.Errorf("operationIds %v %v", page["operationId"], closeOp["operationId"])
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	if comps["CloseRequest"].(map[string]any)["additionalProperties"] != true {
		t.Errorf("request schema not open: %v", comps["CloseRequest"])
	}
	if comps["ThingPage"] == nil || len(comps) != 4 { // Error, CloseRequest, Thing, ThingPage
		t.Errorf("schemas = %v", comps)
	}
	if doc["info"].(map[string]any)["license"] == nil || len(doc["tags"].([]any)) != 1 {
		t.Errorf("info/tags: %v %v", doc["info"], doc["tags"])
	}
}

func TestMergeRenamesConflictingSchemas(t *testing.T) {
	t.Parallel()
	slice := func(path string, stats map[string]any) map[string]any {
		return canonical(map[string]any{
			"paths":      map[string]any{path: map[string]any{"get": map[string]any{"responses": map[string]any{"200": Answer("s", "Stats")}}}},
			"tags":       []any{map[string]any{"name": path}},
			"components": map[string]any{"schemas": map[string]any{"Stats": stats, "Error": errorSchema}},
		}).(map[string]any)
	}
	doc := Merge(map[string]any{"title": "all"}, []Slice{
		{Name: "mask", Doc: slice("/a", Obj(nil, map[string]any{"a": Str}))},
		{Name: "gov", Doc: slice("/b", Obj(nil, map[string]any{"b": Str}))},
	})
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	if schemas["Stats"] == nil || schemas["GovStats"] == nil || schemas["Error"] == nil || len(schemas) != 3 {
		t.Fatalf("schemas = %v", schemas)
	}
	raw, _ := json.Marshal(doc["paths"].(map[string]any)["/b"])
	if !strings.Contains(string(raw), "#/components/schemas/GovStats") {
		t.Fatalf("/b does not reference GovStats: %s", raw)
	}
}

// TestDeclaredErrorAnswerGetsCommonCodes: a declared 400 keeps its codes and
// gains those every write can answer, also when the declaration is reused
// from the memo (a second build).
func TestDeclaredErrorAnswerGetsCommonCodes(t *testing.T) {
	t.Parallel()
	type body struct {
		Note string `json:"note"`
	}
	decl := &server.Declaration{Request: new(body), Responses: []server.Response{
		server.Fails(400, "insufficient_balance: the wallet holds less"),
	}}
	r := server.Route{Method: "POST", Path: "/api/x/pay", Decl: decl}
	for build := 0; build < 2; build++ {
		doc := Build([]server.Route{r}, Doc{Title: "x", Prefixes: []string{"/api/x"}})
		op := doc["paths"].(map[string]any)["/api/x/pay"].(map[string]any)["post"].(map[string]any)
		answer := op["responses"].(map[string]any)["400"].(map[string]any)
		raw, _ := json.Marshal(errorProperty(answer)["enum"])
		for _, code := range []string{"insufficient_balance", "invalid_json", "content_type_required", "payload_too_large"} {
			if !strings.Contains(string(raw), `"`+code+`"`) {
				t.Fatalf("build %d: 400 codes %s lack %s", build, raw, code)
			}
		}
	}
}

// TestAccessAndSecuritySchemes: an operation's description ends with who
// may call it, derived from its declaration; a partner key is its own
// scheme; a document declares only the schemes its operations use, and a
// Tag puts every operation under one tag.
func TestAccessAndSecuritySchemes(t *testing.T) {
	t.Parallel()
	ok := []server.Response{server.Answers(http.StatusOK, "ok", schemas.PlatformIndexInfo{})}
	routes := []server.Route{
		{Method: http.MethodGet, Path: "/api/x/mine", Decl: &server.Declaration{Description: "Mine.", Responses: ok}},
		{Method: http.MethodGet, Path: "/api/x/open", Decl: &server.Declaration{Description: "Open.", Public: true, Responses: ok}},
		{Method: http.MethodPost, Path: "/api/x/admin", Decl: &server.Declaration{Description: "Admin.", Role: "x admin", Responses: ok}},
		{Method: http.MethodGet, Path: "/api/x/partner", Decl: &server.Declaration{Description: "Partner.", APIKey: "X-Partner-Key", Responses: ok}},
		{Method: http.MethodPost, Path: "/api/x/hook", Decl: &server.Declaration{Description: "Hook.", Public: true, Caller: "a signed partner", Responses: ok}},
		{Method: http.MethodGet, Path: "/pages/x", Decl: &server.Declaration{Public: true, Responses: ok}},
	}
	doc := Build(routes, Doc{Title: "x", Prefixes: []string{"/api/x", "/pages"}, Tag: "x"})
	paths := doc["paths"].(map[string]any)
	op := func(method, path string) map[string]any {
		return paths[path].(map[string]any)[method].(map[string]any)
	}
	for _, c := range []struct{ method, path, want string }{
		{"get", "/api/x/mine", "Mine.\n\n**Who may call:** any signed-in user, with `Authorization: Bearer <token>`."},
		{"get", "/api/x/open", "Open.\n\n**Who may call:** anyone; no token."},
		{"post", "/api/x/admin", "Admin.\n\n**Who may call:** a x admin, with `Authorization: Bearer <token>`; any other user gets 403 forbidden."},
		{"get", "/api/x/partner", "Partner.\n\n**Who may call:** a partner, with its key in the `X-Partner-Key` header (no bearer token)."},
		{"post", "/api/x/hook", "Hook.\n\n**Who may call:** a signed partner."},
	} {
		if got := op(c.method, c.path)["description"]; got != c.want {
			t.Errorf("%s %s description = %q, want %q", c.method, c.path, got, c.want)
		}
		if tags := op(c.method, c.path)["tags"].([]string); len(tags) != 1 || tags[0] != "x" {
			t.Errorf("%s %s tags = %v", c.method, c.path, tags)
		}
	}
	if _, ok := op("get", "/pages/x")["description"]; ok {
		t.Errorf("an operation without a declared description got one: %v", op("get", "/pages/x"))
	}
	sec := op("get", "/api/x/partner")["security"]
	if raw, _ := json.Marshal(sec); string(raw) != `[{"partnerKey":[]}]` {
		t.Errorf("partner security = %s", raw)
	}
	schemes := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
	raw, _ := json.Marshal(schemes)
	if len(schemes) != 2 || !strings.Contains(string(raw), `"partnerKey":{"in":"header","name":"X-Partner-Key","type":"apiKey"}`) ||
		!strings.Contains(string(raw), `"bearerAuth":{"bearerFormat":"JWT","scheme":"bearer","type":"http"}`) {
		t.Errorf("securitySchemes = %s", raw)
	}
	public := Build(routes[1:2], Doc{Title: "public", Prefixes: []string{"/api/x"}})
	if _, ok := public["components"].(map[string]any)["securitySchemes"]; ok {
		t.Errorf("an all-public document declares security schemes: %v", public["components"])
	}
	if got := APIKeyScheme("X-Build-Key"); got != "buildKey" {
		t.Errorf("APIKeyScheme(X-Build-Key) = %q", got)
	}
}
