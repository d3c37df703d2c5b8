// Package platform serves build information, the API index, the full
// document of the fintech modules and the API reference page, and gives every
// module its /health and /openapi.json (Basics).
package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
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

// Prefix is where the platform routes are mounted.
const Prefix = "/api/platform"

// SlicePath is the platform module's own OpenAPI slice. It is not
// Prefix/openapi.json like the other modules' slices: that path is the API
// index (spec), which is not an OpenAPI document.
const SlicePath = Prefix + "/slice.json"

// FullPath is the OpenAPI document of the fintech modules.
const FullPath = "/api/openapi.json"

// Handlers serve /api/platform, /api/openapi.json and /docs.
type Handlers struct {
	build  Build
	db     Pinger
	now    func() time.Time
	routes func() []server.Route

	fullMu      sync.Mutex
	fullDoc     []byte // the merged /api/openapi.json, once built
	completeDoc []byte // CompletePath's document, once built
}

// NewHandlers builds the handlers; routes lists the server's routes for the
// API index and the platform slice.
func NewHandlers(build Build, db Pinger, now func() time.Time, routes func() []server.Route) (*Handlers, error) {
	if db == nil || now == nil || routes == nil {
		return nil, errors.New("platform handlers: nil dependency")
	}
	return &Handlers{build: build, db: db, now: now, routes: routes}, nil
}

// fintechModules are the modules of the combined /api/openapi.json, in the
// spec's order, after the identity routes (a client SDK registers or logs in
// to get its token); those this build does not serve have no paths.
var fintechModules = []struct{ name, prefix string }{
	{"auth", "/api/auth"}, {"fiat", "/api/fiat"}, {"mask", "/api/mask"}, {"ledger", "/api/ledger"},
	{"reputation", "/api/reputation"}, {"gov", "/api/gov"}, {"charity", "/api/charity"},
}

// consolePath is the admin console page (gateway/console), documented in
// this slice.
const consolePath = "/admin"

// FullDocument is the OpenAPI 3.0 document of the fintech modules.
type FullDocument Document

// Register mounts the routes. Each operation is declared with its answer
// types (server.Op), which the platform slice is reflected from.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea(server.NoKeys)
	server.Get(g, "/version", server.Op[server.NoRequest]{
		Summary:     "Build and version information",
		Description: "The service name, API version, release, runtime, environment, deposit processor mode and uptime. Read-only.",
		Public:      true, Handle: h.version,
		Responses: []server.Response{server.Answers(http.StatusOK, "build information", schemas.PlatformVersion{})},
	})
	registerHealth(g, Health(h.db, nil), HealthAnswer{})
	server.Get(g, "/openapi.json", server.Op[server.NoRequest]{
		Summary:     "Aggregate API index: the modules with their OpenAPI slices, and the SDK packages",
		Description: "Lists the modules this build serves with the URL of each one's slice, the full and the complete document, and the SDK packages. Read-only.",
		Public:      true,
		Handle:      h.index,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the index (not itself an OpenAPI document)", schemas.PlatformIndex{})},
	})
	server.Get(g, strings.TrimPrefix(SlicePath, Prefix), server.Op[server.NoRequest]{
		Summary:     "OpenAPI 3.0 slice of the platform module",
		Description: "The OpenAPI document of the platform routes. Read-only.",
		Public:      true,
		// The admin console's data routes (under Prefix/admin) need a
		// token; the rest is public.
		Handle: serveDoc(openapi.Handler(h.routes, openapi.Doc{
			Title: "Platform",
			Description: "Build information, the API index (" + Prefix + "/openapi.json), the full document of the fintech modules (" +
				FullPath + "), the complete document of every module (" + CompletePath + "), the API reference page (/docs) " +
				"and the admin console (" + consolePath + ", its data under " + Prefix + "/admin).",
			Prefixes: []string{Prefix, FullPath, docsPath, consolePath},
			Tag:      "platform",
		})),
		Responses: []server.Response{server.Answers(http.StatusOK, "the document", Document{})},
	})
	h.registerComplete(g)
	server.Get(r, FullPath, server.Op[server.NoRequest]{
		Summary:     "The OpenAPI 3.0 document of the fintech modules",
		Description: "The spec's document of the fintech modules (identity, fiat, mask, ledger, reputation, gov, charity). Read-only.",
		Public:      true, Handle: h.full,
		Responses: []server.Response{server.Answers(http.StatusOK, "the merged slices of the fintech modules", FullDocument{})},
	})
	registerDocs(r)
	registerGuides(r)
}

// full answers /api/openapi.json: the slices the fintech modules serve, as
// they serve them (read in process through the application's own handler),
// merged, so the combined document says exactly what the slices say. The
// routes are fixed once the server runs, so the first merge is kept (and the
// internal reads are not charged to the rate limiter again).
func (h *Handlers) full(c *fiber.Ctx, _ *server.NoRequest) error {
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
		status, body := serveInProcess(serve, m.prefix+"/openapi.json")
		if status == http.StatusNotFound {
			continue // this build does not serve the module
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("slice %s: status %d", m.prefix, status)
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
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

// index lists the modules this build serves, with the URL of each slice.
func (h *Handlers) index(c *fiber.Ctx, _ *server.NoRequest) error {
	return c.JSON(schemas.PlatformIndex{
		OpenAPI:  "3.0.3",
		Info:     schemas.PlatformIndexInfo{Title: "Fintech platform API index", Version: h.build.Version},
		Platform: schemas.PlatformIndexPlatform{Version: h.build.Version, SDK: schemas.PlatformSDK{NPM: npmPackages(h.build.SDKPackages)}},
		Modules:  Modules(h.routes()),
		Full:     FullPath,
		Complete: CompletePath,
	})
}

// Modules lists the modules of the registered routes, in mount order: every
// route under /api/<name>/ declared to answer a module slice (Document, as
// Basics registers it) names its module and the slice's URL path, so a new
// module appears in the index by registering its routes. A module whose
// routes are not declared yet is found by its GET /api/<name>/openapi.json.
func Modules(routes []server.Route) []schemas.PlatformModule {
	mods := []schemas.PlatformModule{}
	seen := map[string]bool{}
	for _, r := range routes {
		rest, ok := strings.CutPrefix(r.Path, "/api/")
		name, _, nested := strings.Cut(rest, "/")
		if !ok || !nested || r.Method != http.MethodGet || seen[name] || !isSlice(r) {
			continue
		}
		seen[name] = true
		mods = append(mods, schemas.PlatformModule{Name: name, Prefix: "/api/" + name, OpenAPI: r.Path})
	}
	return mods
}

// serveDoc is a module document's handler as an operation's.
func serveDoc(doc fiber.Handler) func(*fiber.Ctx, *server.NoRequest) error {
	return func(c *fiber.Ctx, _ *server.NoRequest) error { return doc(c) }
}

// isSlice reports whether r serves a module's OpenAPI slice.
func isSlice(r server.Route) bool {
	if r.Decl == nil {
		rest := strings.TrimPrefix(r.Path, "/api/")
		name, ok := strings.CutSuffix(rest, "/openapi.json")
		return ok && name != "" && name != "platform" && !strings.Contains(name, "/")
	}
	for _, resp := range r.Decl.Responses {
		if _, ok := resp.Body.(Document); ok && resp.Status == http.StatusOK {
			return true
		}
	}
	return false
}

func (h *Handlers) version(c *fiber.Ctx, _ *server.NoRequest) error {
	return c.JSON(schemas.PlatformVersion{
		Service: h.build.Service, Status: "ok", Version: h.build.Version, Release: h.build.Release,
		Runtime: runtime.Version(), Environment: h.build.Environment, Processor: h.build.Processor, StartedAt: h.build.StartedAt,
		UptimeSeconds: int64(h.now().Sub(h.build.StartedAt).Seconds()),
	})
}

// Health returns a handler reporting liveness and database reachability,
// plus the fields extra adds (counts and the like). It answers 503 when the
// database does not answer within two seconds.
func Health(db Pinger, extra func(ctx context.Context) (map[string]any, error)) fiber.Handler {
	if extra == nil {
		return HealthOf(db, func(_ context.Context, base HealthAnswer) (HealthAnswer, error) { return base, nil })
	}
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
