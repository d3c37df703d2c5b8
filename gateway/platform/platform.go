// Package platform serves build information and the per-module health
// endpoints.
package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fintech/platform/gateway/identity"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// Build is what GET /api/platform/version reports.
type Build struct {
	Service     string
	Version     string
	Release     string
	Environment string
	// Processor names the deposit processor mode: "test" (the embedded test
	// processor, no PROCESSOR_API_KEY) or "stripe".
	Processor string
	StartedAt time.Time
	// SDKPackages names the npm packages of the client SDK that
	// /api/platform/openapi.json lists under platform.sdk.npm (the one place
	// they are set: cmd/platform's wiring).
	SDKPackages []string
}

// SDKPackage is the npm package of the TypeScript SDK generated from
// /api/openapi.json (sdk/typescript).
const SDKPackage = "@fintech-platform/sdk"

// npmPackages is never null in JSON.
func npmPackages(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

// Pinger checks that a dependency answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Handlers serve /api/platform.
type Handlers struct {
	build  Build
	db     Pinger
	now    func() time.Time
	routes func() []server.Route

	fullMu  sync.Mutex
	fullDoc []byte // the merged /api/openapi.json, once built
}

// NewHandlers builds the handlers; routes lists the server's routes for the
// API index.
func NewHandlers(build Build, db Pinger, now func() time.Time, routes func() []server.Route) *Handlers {
	return &Handlers{build: build, db: db, now: now, routes: routes}
}

// fintechModules are the modules of the combined /api/openapi.json, in the
// spec's order, after the identity routes (a client SDK registers or logs in
// to get its token); those this build does not serve have no paths.
var fintechModules = []struct{ name, prefix string }{
	{"auth", "/api/auth"}, {"fiat", "/api/fiat"}, {"mask", "/api/mask"}, {"ledger", "/api/ledger"},
	{"reputation", "/api/reputation"}, {"gov", "/api/gov"}, {"charity", "/api/charity"},
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group("/api/platform")
	g.Get("/version", "Build and version information", h.version)
	g.Get("/health", "Liveness and database reachability", Health(h.db, nil))
	g.Get("/openapi.json", "Aggregate API index: modules and their OpenAPI slices", h.index)
	registerDocs(r)
	auth := r.Group(identity.Prefix)
	auth.Get("/health", "Liveness and database reachability", Health(h.db, nil))
	auth.Get("/openapi.json", "OpenAPI 3.0 slice of the identity routes", openapi.Handler(h.routes, identity.OpenAPIDoc))
	r.Group("/api").Get("/openapi.json", "The OpenAPI 3.0 document of the fintech modules", h.full)
}

// full answers /api/openapi.json: the slices the fintech modules serve, as
// they serve them (read in process through the application's own handler),
// merged, so the combined document says exactly what the slices say. The
// routes are fixed once the server runs, so the first merge is kept (and the
// internal reads are not charged to the rate limiter again).
func (h *Handlers) full(c *fiber.Ctx) error {
	h.fullMu.Lock()
	defer h.fullMu.Unlock()
	if h.fullDoc == nil {
		doc, err := h.mergeSlices(c.App())
		if err != nil {
			return err
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		h.fullDoc = raw
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(h.fullDoc)
}

func (h *Handlers) mergeSlices(app *fiber.App) (map[string]any, error) {
	serve := app.Handler()
	var slices []openapi.Slice
	for _, m := range fintechModules {
		var req fasthttp.Request
		req.Header.SetMethod(http.MethodGet)
		req.SetRequestURI(m.prefix + "/openapi.json")
		var fctx fasthttp.RequestCtx
		fctx.Init(&req, nil, nil)
		serve(&fctx)
		if fctx.Response.StatusCode() == http.StatusNotFound {
			continue // this build does not serve the module
		}
		if fctx.Response.StatusCode() != http.StatusOK {
			return nil, fmt.Errorf("slice %s: status %d", m.prefix, fctx.Response.StatusCode())
		}
		var doc map[string]any
		if err := json.Unmarshal(fctx.Response.Body(), &doc); err != nil {
			return nil, fmt.Errorf("slice %s: %w", m.prefix, err)
		}
		slices = append(slices, openapi.Slice{Name: m.name, Doc: doc})
	}
	return openapi.Merge(map[string]any{
		"title": "Fintech platform", "version": h.build.Version, "license": openapi.License,
		"description": "The fintech modules (" + strings.Join(names(), ", ") + ") in one document; each module also serves its own slice at <prefix>/openapi.json.\n\n" + openapi.IgnoredFields,
	}, slices), nil
}

func names() []string {
	out := make([]string, len(fintechModules))
	for i, m := range fintechModules {
		out[i] = m.name
	}
	return out
}

type moduleRef struct {
	Name    string `json:"name"`
	Prefix  string `json:"prefix"`
	OpenAPI string `json:"openapi"`
}

// index lists the modules this build serves, with the URL of each slice.
func (h *Handlers) index(c *fiber.Ctx) error {
	// Every module that serves a slice at /api/<name>/openapi.json is listed,
	// so a new module appears here by registering its routes.
	var mods []moduleRef
	for _, r := range h.routes() {
		rest, ok := strings.CutPrefix(r.Path, "/api/")
		if !ok || r.Method != http.MethodGet {
			continue
		}
		name, ok := strings.CutSuffix(rest, "/openapi.json")
		if !ok || name == "" || name == "platform" || strings.Contains(name, "/") {
			continue
		}
		mods = append(mods, moduleRef{Name: name, Prefix: "/api/" + name, OpenAPI: r.Path})
	}
	return c.JSON(map[string]any{
		"openapi":  "3.0.3",
		"info":     map[string]any{"title": "Fintech platform API index", "version": h.build.Version},
		"platform": map[string]any{"version": h.build.Version, "sdk": map[string]any{"npm": npmPackages(h.build.SDKPackages)}},
		"modules":  mods,
		"full":     "/api/openapi.json",
	})
}

type versionResponse struct {
	Service       string    `json:"service"`
	Status        string    `json:"status"`
	Version       string    `json:"version"`
	Release       string    `json:"release"`
	Runtime       string    `json:"runtime"`
	Environment   string    `json:"environment"`
	Processor     string    `json:"processor"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds int64     `json:"uptimeSeconds"`
}

func (h *Handlers) version(c *fiber.Ctx) error {
	return c.JSON(versionResponse{
		Service: h.build.Service, Status: "ok", Version: h.build.Version, Release: h.build.Release,
		Runtime: runtime.Version(), Environment: h.build.Environment, Processor: h.build.Processor, StartedAt: h.build.StartedAt,
		UptimeSeconds: int64(h.now().Sub(h.build.StartedAt).Seconds()),
	})
}

// Health returns a handler reporting liveness and database reachability,
// plus the fields extra adds (counts and the like). It answers 503 when the
// database does not answer within two seconds.
func Health(db Pinger, extra func(ctx context.Context) (map[string]any, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		body := map[string]any{"status": "ok", "database": "ok"}
		status := http.StatusOK
		if err := db.Ping(ctx); err != nil {
			body["status"], body["database"] = "degraded", "unreachable"
			status = http.StatusServiceUnavailable
		} else if extra != nil {
			more, err := extra(ctx)
			if err != nil {
				body["status"] = "degraded"
				body["detail"] = "counts unavailable"
				status = http.StatusServiceUnavailable
			}
			for k, v := range more {
				body[k] = v
			}
		}
		return c.Status(status).JSON(body)
	}
}
