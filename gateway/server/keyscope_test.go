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
// registration from its area in schemas.KeyAreas, and is what the request
// that matched the route sees: read and write of an area by method, the
// longest prefix winning (webhooks inside /api/fiat), and no scope (closed
// to keys) for public, admin, NoKeys and undeclared identity routes.
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
	fiat := s.Root().Group("/api/fiat")
	server.Get(fiat, "/wallets", op(server.Op[server.NoRequest]{}), record)
	server.Post(fiat, "/transfer", op(server.Op[server.NoRequest]{}), record)
	server.Handle(fiat, http.MethodPatch, "/me/webhook", op(server.Op[server.NoRequest]{}), record)
	server.Get(fiat, "/admin/audit", op(server.Op[server.NoRequest]{Role: "fiat admin"}), record)
	server.Get(fiat, "/wallets/:id/public", op(server.Op[server.NoRequest]{Public: true}), record)
	server.Post(fiat, "/merchant/keys", op(server.Op[server.NoRequest]{KeyScope: server.NoKeys}), record)
	server.Post(fiat, "/merchant/charge", op(server.Op[server.NoRequest]{}), record)
	auth := s.Root().Group("/api/auth")
	server.Get(auth, "/me", op(server.Op[server.NoRequest]{KeyScope: "account:read"}), record)
	server.Get(auth, "/me/undeclared", op(server.Op[server.NoRequest]{}), record)
	server.Post(auth, "/api-keys", op(server.Op[server.NoRequest]{}), record)
	s.Finish()

	want := map[string]string{
		"GET /api/fiat/wallets":           "fiat:read",
		"POST /api/fiat/transfer":         "fiat:write",
		"PATCH /api/fiat/me/webhook":      "webhooks:write",
		"GET /api/fiat/admin/audit":       "",
		"GET /api/fiat/wallets/w1/public": "",
		"POST /api/fiat/merchant/keys":    "",
		"POST /api/fiat/merchant/charge":  "fiat:write",
		"GET /api/auth/me":                "account:read",
		"GET /api/auth/me/undeclared":     "",
		"POST /api/auth/api-keys":         "",
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
	for _, r := range s.Routes() {
		if r.Decl != nil && r.KeyScope != want[r.Method+" "+strings.Replace(r.Path, ":id", "w1", 1)] {
			t.Errorf("Routes() lists %s %s with scope %q", r.Method, r.Path, r.KeyScope)
		}
	}
}

// TestUnscopedRouteFailsAtStartup: a declared route under a prefix the
// scope table does not list cannot register, so a new module cannot forget
// to say what keys may do with it.
func TestUnscopedRouteFailsAtStartup(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	op := server.Op[server.NoRequest]{Handle: func(*fiber.Ctx, *server.NoRequest) error { return nil }}
	server.Get(s.Root().Group("/api/lenient"), "/things", op) // a unit test's server: closed to keys
	if r := s.Routes()[0]; r.KeyScope != "" {
		t.Fatalf("an unlisted route of a lenient server has the scope %q", r.KeyScope)
	}
	s.RequireKeyScopes()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "schemas.KeyAreas") {
			t.Fatalf("registering an unscoped route: %v", r)
		}
	}()
	server.Get(s.Root().Group("/api/newmodule"), "/things", server.Op[server.NoRequest]{
		Handle: func(*fiber.Ctx, *server.NoRequest) error { return nil }})
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
