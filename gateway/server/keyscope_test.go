package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// TestKeyScopeFromDeclarations: each route's API key scope is declared
// with the route (Op.KeyScope: a scope, or NoKeys) or else derived at
// registration from its router's key area (Router.KeyArea, inherited by
// groups), and is what the request that matched the route sees: read and
// write of an area by method (a group under /api/fiat may be another area,
// as webhooks are), and no scope (closed to keys) for public, admin,
// partner-key and NoKeys routes, routes of a NoKeys area and, on a lenient
// server, routes of no area.
func TestKeyScopeFromDeclarations(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	seen := map[string]string{}
	record := func(c *fiber.Ctx) error {
		seen[c.Method()+" "+c.Path()] = s.KeyScope(c)
		return c.SendStatus(http.StatusNoContent)
	}
	op := func(o server.Op[server.NoRequest]) server.Op[server.NoRequest] {
		o.Handle = func(*fiber.Ctx, *server.NoRequest) error { return nil }
		return o
	}
	fiat := s.Root().Group("/api/fiat").KeyArea("fiat")
	server.Get(fiat, "/wallets", op(server.Op[server.NoRequest]{}), record)
	server.Handle(fiat, http.MethodHead, "/wallets", op(server.Op[server.NoRequest]{}), record)
	server.Post(fiat, "/transfer", op(server.Op[server.NoRequest]{}), record)
	server.Get(fiat, "/admin/audit", op(server.Op[server.NoRequest]{Role: "fiat admin"}), record)
	server.Get(fiat, "/wallets/:id/public", op(server.Op[server.NoRequest]{Public: true}), record)
	server.Get(fiat, "/partner/things", op(server.Op[server.NoRequest]{APIKey: "X-Partner-Key"}), record)
	server.Post(fiat, "/merchant/keys", op(server.Op[server.NoRequest]{KeyScope: server.NoKeys}), record)
	server.Post(fiat, "/merchant/charge", op(server.Op[server.NoRequest]{}), record)
	server.Get(fiat.Group("/me"), "/dashboard", op(server.Op[server.NoRequest]{}), record)
	fiat.Post("/plain", ratelimit.Write, "a route without a declaration", record)
	hooks := s.Root().Group("/api/fiat").KeyArea("webhooks")
	server.Handle(hooks, http.MethodPatch, "/me/webhook", op(server.Op[server.NoRequest]{}), record)
	server.Get(hooks, "/me/webhooks", op(server.Op[server.NoRequest]{}), record)
	auth := s.Root().Group("/api/auth").KeyArea(server.NoKeys)
	server.Get(auth, "/me", op(server.Op[server.NoRequest]{KeyScope: "account:read"}), record)
	server.Get(auth, "/me/undeclared", op(server.Op[server.NoRequest]{}), record)
	server.Post(auth, "/api-keys", op(server.Op[server.NoRequest]{}), record)
	server.Get(s.Root().Group("/api/lenient"), "/things", op(server.Op[server.NoRequest]{}), record)
	s.Finish()

	want := map[string]string{
		"GET /api/fiat/wallets":           "fiat:read",
		"HEAD /api/fiat/wallets":          "fiat:read",
		"POST /api/fiat/transfer":         "fiat:write",
		"GET /api/fiat/admin/audit":       "",
		"GET /api/fiat/wallets/w1/public": "",
		"GET /api/fiat/partner/things":    "",
		"POST /api/fiat/merchant/keys":    "",
		"POST /api/fiat/merchant/charge":  "fiat:write",
		"GET /api/fiat/me/dashboard":      "fiat:read",
		"POST /api/fiat/plain":            "fiat:write",
		"PATCH /api/fiat/me/webhook":      "webhooks:write",
		"GET /api/fiat/me/webhooks":       "webhooks:read",
		"GET /api/auth/me":                "account:read",
		"GET /api/auth/me/undeclared":     "",
		"POST /api/auth/api-keys":         "",
		"GET /api/lenient/things":         "",
	}
	for route, scope := range want {
		method, path, _ := strings.Cut(route, " ")
		resp, err := s.App.Test(httptest.NewRequest(method, path, nil))
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("%s: %v %v", route, resp, err)
		}
		if got, ok := seen[route]; !ok || got != scope {
			t.Errorf("%s: key scope %q (seen %v), want %q", route, got, ok, scope)
		}
	}
	if len(s.Routes()) != len(want) {
		t.Errorf("%d routes, want %d", len(s.Routes()), len(want))
	}
	for _, r := range s.Routes() {
		if r.KeyScope != want[r.Method+" "+strings.Replace(r.Path, ":id", "w1", 1)] {
			t.Errorf("Routes() lists %s %s with scope %q", r.Method, r.Path, r.KeyScope)
		}
	}
}

// TestRouteWithoutKeyAreaFailsAtStartup: on a strict server (the binary's)
// a declared, authenticated route whose router names no key area and that
// declares no KeyScope cannot register — the panic names the route — so a
// new module cannot forget to say what keys may do with it. Routes that
// keys can never call (public, admin, partner-key) and routes that declare
// their own scope need no area.
func TestRouteWithoutKeyAreaFailsAtStartup(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.RequireKeyScopes()
	handle := func(*fiber.Ctx, *server.NoRequest) error { return nil }
	bare := s.Root().Group("/api/newmodule")
	server.Get(bare, "/public", server.Op[server.NoRequest]{Public: true, Handle: handle})
	server.Get(bare, "/admin", server.Op[server.NoRequest]{Role: "admin", Handle: handle})
	server.Get(bare, "/partner", server.Op[server.NoRequest]{APIKey: "X-Partner-Key", Handle: handle})
	server.Get(bare, "/closed", server.Op[server.NoRequest]{KeyScope: server.NoKeys, Handle: handle})
	server.Get(bare, "/own", server.Op[server.NoRequest]{KeyScope: "fiat:read", Handle: handle})
	server.Post(bare.KeyArea("gov"), "/things", server.Op[server.NoRequest]{Handle: handle})
	server.Post(bare.KeyArea(server.NoKeys), "/secrets", server.Op[server.NoRequest]{Handle: handle})
	scopes := map[string]string{}
	for _, r := range s.Routes() {
		scopes[r.Method+" "+r.Path] = r.KeyScope
	}
	if scopes["GET /api/newmodule/own"] != "fiat:read" || scopes["POST /api/newmodule/things"] != "gov:write" ||
		scopes["POST /api/newmodule/secrets"] != "" || scopes["GET /api/newmodule/public"] != "" || len(scopes) != 7 {
		t.Fatalf("scopes: %v", scopes)
	}

	defer func() {
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, "PATCH /api/newmodule/things/:id") || !strings.Contains(msg, "KeyArea") {
			t.Fatalf("registering a route of no key area: %v", r)
		}
	}()
	server.Handle(bare, http.MethodPatch, "/things/:id", server.Op[server.NoRequest]{Handle: handle})
}

// TestKeyAreaMustExist: a router cannot name an area schemas.KeyAreas
// does not list.
func TestKeyAreaMustExist(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"fiats"`) {
			t.Fatalf("naming an unknown key area: %v", r)
		}
	}()
	s.Root().Group("/api/fiat").KeyArea("fiats")
}

// TestDeclaredKeyScopeMustExist: a route that declares a scope no area
// has cannot register.
func TestDeclaredKeyScopeMustExist(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "fiat:admin") {
			t.Fatalf("registering a route with an unknown scope: %v", r)
		}
	}()
	server.Get(s.Root().Group("/api/fiat"), "/things", server.Op[server.NoRequest]{KeyScope: "fiat:admin",
		Handle: func(*fiber.Ctx, *server.NoRequest) error { return nil }})
}
