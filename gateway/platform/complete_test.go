package platform

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
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
	tags := doc["tags"].([]any)
	if len(tags) != 2 || tags[0].(map[string]any)["name"] != "platform" || tags[1].(map[string]any)["name"] != "demo" ||
		tags[1].(map[string]any)["description"] != "A demonstration module." || tags[1].(map[string]any)["x-displayName"] != "Demo" {
		t.Errorf("tags = %v", tags)
	}
	groups := doc["x-tagGroups"].([]any)
	if len(groups) != 2 {
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
