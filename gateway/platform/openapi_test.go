package platform

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/server/servertest"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

type okDB struct{}

func (okDB) Ping(context.Context) error { return nil }

func platformServer(t *testing.T) *server.Server {
	t.Helper()
	s := servertest.New()
	h, err := NewHandlers(Build{Version: "1.0.0", SDKPackages: []string{SDKPackage}}, okDB{}, time.Now, s.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(s.Root())
	// A module registered the kit's way, and one whose slice route is not
	// declared yet.
	Basics(s.Root().Group("/api/mask"), "mask", Health(okDB{}, nil), func(c *fiber.Ctx) error { return c.JSON(Document{}) })
	s.Root().Group("/api/old").Get("/openapi.json", "old", func(c *fiber.Ctx) error { return c.JSON(Document{}) })
	s.Finish()
	return s
}

// TestOpenAPI builds the platform slice from the routes Register really
// declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	s := platformServer(t)
	doc := servertest.Document(t, s, SlicePath)
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/platform/version", "/api/platform/health", "/api/platform/openapi.json",
		"/api/platform/slice.json", "/api/openapi.json", CompletePath, "/docs", redocPath, GuidesPath, GuidesPath + "/{slug}"} {
		op, ok := paths[p].(map[string]any)["get"].(map[string]any)
		if !ok {
			t.Fatalf("slice lacks GET %s: %v", p, paths)
		}
		if sec := op["security"].([]any); len(sec) != 0 {
			t.Errorf("%s needs a token: %v", p, sec)
		}
		if tags := op["tags"].([]any); len(tags) != 1 || tags[0] != "platform" {
			t.Errorf("%s tags = %v", p, tags)
		}
	}
	if len(paths) != 10 {
		t.Errorf("paths = %v", paths)
	}
	page := paths["/docs"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)
	if _, ok := page["content"].(map[string]any)["text/html"]; !ok {
		t.Errorf("/docs 200 = %v", page)
	}
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	index := comps["PlatformIndex"].(map[string]any)
	if req := index["required"].([]any); len(req) != 6 {
		t.Errorf("PlatformIndex.required = %v", req)
	}
	if _, ok := doc["components"].(map[string]any)["securitySchemes"]; ok {
		t.Errorf("the all-public slice declares a security scheme")
	}
	raw, _ := json.Marshal(doc)
	t.Logf("%d bytes", len(raw))
}

// TestIndex lists every module that serves a slice, the platform's own
// included, and names the SDK package.
func TestIndex(t *testing.T) {
	t.Parallel()
	s := platformServer(t)
	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, "/api/platform/openapi.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	var idx schemas.PlatformIndex
	if err := json.NewDecoder(resp.Body).Decode(&idx); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("index: %d %v", resp.StatusCode, err)
	}
	want := []schemas.PlatformModule{
		{Name: "platform", Prefix: "/api/platform", OpenAPI: "/api/platform/slice.json"},
		{Name: "mask", Prefix: "/api/mask", OpenAPI: "/api/mask/openapi.json"},
		{Name: "old", Prefix: "/api/old", OpenAPI: "/api/old/openapi.json"},
	}
	if len(idx.Modules) != len(want) {
		t.Fatalf("modules = %+v", idx.Modules)
	}
	for i := range want {
		if idx.Modules[i] != want[i] {
			t.Errorf("modules[%d] = %+v, want %+v", i, idx.Modules[i], want[i])
		}
	}
	if len(idx.Platform.SDK.NPM) != 1 || idx.Platform.SDK.NPM[0] != SDKPackage || idx.Full != FullPath || idx.Complete != CompletePath || idx.OpenAPI != "3.0.3" {
		t.Errorf("index = %+v", idx)
	}
	slice, err := s.App.Test(httptest.NewRequest(http.MethodGet, "/api/platform/slice.json", nil))
	if err != nil || slice.StatusCode != http.StatusOK {
		t.Fatalf("slice: %v %v", slice, err)
	}
}
