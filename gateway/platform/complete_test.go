package platform

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/gateway/server/servertest"
	"github.com/fintech/platform/schemas"
)

// TestComplete: the complete document merges every module of the index,
// one tag per module, and lists an operation mounted under a proxy base once,
// with both servers.
func TestComplete(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	h, err := NewHandlers(Build{Version: "1.2.3"}, okDB{}, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	type thing struct {
		ID string `json:"id" required:"true"`
	}
	type thingRequest struct {
		ID string `path:"id"`
	}
	for _, base := range []string{"", "/api-backend"} {
		g := s.Root().Group(base + "/api/demo")
		Basics(g, "demo", Health(okDB{}, nil), openapi.Handler(s.Routes, openapi.Doc{
			Title: "Demo", Description: "A demonstration module.", Prefixes: []string{base + "/api/demo"},
		}))
		server.Get(g, "/things/:id", server.Op[thingRequest]{
			Summary:   "A thing",
			Handle:    func(c *fiber.Ctx, req *thingRequest) error { return c.JSON(thing{ID: req.ID}) },
			Responses: []server.Response{server.Answers(http.StatusOK, "the thing", thing{})},
		})
	}
	s.Finish()

	var idx schemas.PlatformIndex
	getJSON(t, s, Prefix+"/openapi.json", &idx)
	if idx.Complete != CompletePath {
		t.Fatalf("index complete = %q", idx.Complete)
	}
	var doc map[string]any
	getJSON(t, s, CompletePath, &doc)
	paths := doc["paths"].(map[string]any)
	for p := range paths {
		if len(p) >= len("/api-backend") && p[:len("/api-backend")] == "/api-backend" {
			t.Errorf("the proxy mount is listed as a path of its own: %s", p)
		}
	}
	thingOp := paths["/api/demo/things/{id}"].(map[string]any)["get"].(map[string]any)
	servers, _ := thingOp["servers"].([]any)
	if len(servers) != 2 || servers[0].(map[string]any)["url"] != "/" || servers[1].(map[string]any)["url"] != "/api-backend" {
		t.Errorf("servers of the mirrored operation = %v", thingOp["servers"])
	}
	if tags := thingOp["tags"].([]any); len(tags) != 1 || tags[0] != "demo" {
		t.Errorf("tags = %v", tags)
	}
	for _, p := range []string{"/api/platform/version", CompletePath, FullPath, "/docs", "/api/demo/health"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("complete document lacks %s", p)
		}
	}
	// The tags in the order of the groups: the modules, the platform, the
	// console and assets (the docs renderer's script).
	tags := doc["tags"].([]any)
	if len(tags) != 3 || tags[0].(map[string]any)["name"] != "demo" || tags[1].(map[string]any)["name"] != "platform" ||
		tags[2].(map[string]any)["name"] != "console" ||
		tags[0].(map[string]any)["description"] != "A demonstration module." || tags[0].(map[string]any)["x-displayName"] != "Demo" {
		t.Errorf("tags = %v", tags)
	}
	groups := doc["x-tagGroups"].([]any)
	if len(groups) != 3 {
		t.Errorf("x-tagGroups = %v", groups)
	}
	if v := doc["info"].(map[string]any)["version"]; v != "1.2.3" {
		t.Errorf("info.version = %v", v)
	}
}

func getJSON(t *testing.T, s *server.Server, path string, into any) {
	t.Helper()
	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// TestCompleteOpensOnUserOperations: admin operations get their module's
// admin tag and the console page and scripts the console tag, grouped after
// every module's user operations; the served document's first path is a
// user's call; every operation has a curl and a TypeScript sample, and no
// example is Redoc's "stringstring…" placeholder.
func TestCompleteOpensOnUserOperations(t *testing.T) {
	t.Parallel()
	s := servertest.New()
	h, err := NewHandlers(Build{Version: "1.2.3"}, okDB{}, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	type transfer struct {
		WalletID string `json:"walletId" required:"true" format:"ksuid"`
		Amount   int64  `json:"amount" required:"true" minimum:"1"`
		Currency string `json:"currency" pattern:"^[A-Z]{3}$"`
		Secret   string `json:"secret" minLength:"16"`
	}
	type receipt struct {
		ID        string    `json:"id" required:"true" format:"ksuid"`
		CreatedAt time.Time `json:"createdAt" required:"true"`
	}
	type freeze struct {
		ID string `path:"id"`
	}
	g := s.Root().Group("/api/demo")
	Basics(g, "demo", Health(okDB{}, nil), openapi.Handler(s.Routes, openapi.Doc{Title: "Demo", Prefixes: []string{"/api/demo", "/admin"}}))
	server.Post(g, "/admin/wallets/:id/freeze", server.Op[freeze]{
		Summary: "Freeze a wallet", Role: "demo admin",
		Handle:    func(c *fiber.Ctx, _ *freeze) error { return c.SendStatus(http.StatusNoContent) },
		Responses: []server.Response{{Status: http.StatusNoContent, Description: "frozen"}},
	})
	server.Post(g, "/transfer", server.Op[transfer]{
		Summary: "Transfer", Class: ratelimit.Money,
		Handle:    func(c *fiber.Ctx, _ *transfer) error { return c.JSON(receipt{}) },
		Responses: []server.Response{server.Answers(http.StatusOK, "the receipt", receipt{})},
	})
	server.Get(s.Root().Group("/admin"), "/chart.js", server.Op[server.NoRequest]{
		Summary: "A script of the console", Public: true,
		Handle:    func(c *fiber.Ctx, _ *server.NoRequest) error { return c.SendString("") },
		Responses: []server.Response{{Status: http.StatusOK, Description: "the script", ContentType: "text/javascript"}},
	})
	s.Finish()

	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, CompletePath, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	tagOf := func(method, path string) string {
		return paths[path].(map[string]any)[method].(map[string]any)["tags"].([]any)[0].(string)
	}
	for _, c := range []struct{ method, path, want string }{
		{"post", "/api/demo/transfer", "demo"},
		{"post", "/api/demo/admin/wallets/{id}/freeze", "demo-admin"},
		{"get", "/admin/chart.js", "console"},
		{"get", redocPath, "console"},
		{"get", "/docs", "platform"},
	} {
		if got := tagOf(c.method, c.path); got != c.want {
			t.Errorf("%s %s tag = %q, want %q", c.method, c.path, got, c.want)
		}
	}
	var groups []string
	for _, g := range doc["x-tagGroups"].([]any) {
		groups = append(groups, g.(map[string]any)["name"].(string))
	}
	if want := []string{"More modules", "Platform", "Operations (admin)", "Console & assets"}; strings.Join(groups, "|") != strings.Join(want, "|") {
		t.Errorf("x-tagGroups = %v, want %v", groups, want)
	}
	first := firstPath(t, raw)
	if first != "/api/demo/transfer" {
		t.Errorf("the document opens on %s, want the user's POST /api/demo/transfer", first)
	}
	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			samples, _ := o.(map[string]any)["x-codeSamples"].([]any)
			langs := map[string]string{}
			for _, s := range samples {
				m := s.(map[string]any)
				langs[m["lang"].(string)] = m["source"].(string)
			}
			if !strings.HasPrefix(langs["Shell"], "API=") || !strings.Contains(langs["Shell"], "curl ") ||
				!strings.Contains(langs["TypeScript"], `from "`+SDKPackage+`"`) {
				t.Errorf("%s %s code samples = %v", method, path, samples)
			}
		}
	}
	if strings.Contains(string(raw), "stringstring") {
		t.Error("an example is Redoc's stringstring placeholder")
	}
	// Redoc's sampler repeats "string" up to a minLength and ignores a
	// pattern: such a schema needs an example of its own.
	if bare := openapi.PlaceholderSchemas(doc); len(bare) > 0 {
		t.Errorf("string schemas with a pattern or a length floor and no example: %v", bare)
	}
	transferOp := paths["/api/demo/transfer"].(map[string]any)["post"].(map[string]any)
	curl := transferOp["x-codeSamples"].([]any)[0].(map[string]any)["source"].(string)
	for _, want := range []string{`-H "Authorization: Bearer $TOKEN"`, `-H "Idempotency-Key: $(uuidgen)"`, `"amount":2500`, `"currency":"KZT"`} {
		if !strings.Contains(curl, want) {
			t.Errorf("transfer curl lacks %s:\n%s", want, curl)
		}
	}
}

// firstPath is the first key of the paths object of a JSON document, in
// the order it was sent (Redoc's order).
func firstPath(t *testing.T, raw []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("no paths: %v", err)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 && v == "paths" {
				if _, err := dec.Token(); err != nil {
					t.Fatal(err)
				}
				key, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				return key.(string)
			}
			if depth == 1 {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
