package platform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// CompletePath is the one OpenAPI document of every operation of every
// module this build serves. The spec fixes FullPath to the fintech modules,
// so the complete document has a URL of its own.
const CompletePath = Prefix + "/openapi.full.json"

// CompleteDocument is the OpenAPI 3.0 document of every module.
type CompleteDocument Document

// completeIntro opens the complete document's description (Redoc shows it
// above the operations).
const completeIntro = "Every operation of every module this build serves, one tag per module. " +
	"Each operation's description says who may call it (public, a user's bearer token, an admin role, " +
	"a partner key or signature) and what it changes.\n\n" +
	"Most operations take `Authorization: Bearer <token>`, the token POST /api/auth/register or " +
	"POST /api/auth/login answers. Errors are `{ error, message, fields? }` with a stable code; writes " +
	"accept an `Idempotency-Key` (one is assigned and echoed when absent); lists page with " +
	"`{ items, nextCursor }`.\n\n" +
	"Guides (getting started, authentication, errors, idempotency, pagination, rate limits, webhooks, " +
	"the admin event stream): [/docs/guides](/docs/guides). The spec's document of the fintech modules " +
	"stays at " + FullPath + "; each module serves its own slice, listed in " + Prefix + "/openapi.json."

func (h *Handlers) registerComplete(g server.Router) {
	server.Get(g, strings.TrimPrefix(CompletePath, Prefix), server.Op[server.NoRequest]{
		Summary:     "The complete OpenAPI 3.0 document: every operation of every module",
		Description: "This document: every operation of every module, one tag per module. Read-only.",
		Public:      true,
		Handle:      h.complete,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the document", CompleteDocument{})},
	})
}

// complete answers CompletePath: the slices every module of the index
// serves, read in process as the application serves them, merged with one
// tag per module; an operation also mounted under a proxy base (the
// constitution modules under /api-backend) appears once, with both servers.
// The routes are fixed once the server runs, so the first build is kept.
func (h *Handlers) complete(c *fiber.Ctx, _ *server.NoRequest) error {
	h.fullMu.Lock()
	defer h.fullMu.Unlock()
	if h.completeDoc == nil {
		doc, err := h.buildComplete(c.App())
		if err != nil {
			return err
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		h.completeDoc = raw
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(h.completeDoc)
}

// buildComplete is the complete document of the routes app serves.
func (h *Handlers) buildComplete(app *fiber.App) (map[string]any, error) {
	serve := app.Handler()
	routes := h.routes()
	mods := Modules(routes)
	slices := make([]openapi.Slice, 0, len(mods))
	tags := make([]any, 0, len(mods))
	for _, m := range mods {
		status, body := serveInProcess(serve, m.OpenAPI)
		if status != http.StatusOK {
			return nil, fmt.Errorf("slice %s: status %d", m.OpenAPI, status)
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, fmt.Errorf("slice %s: %w", m.OpenAPI, err)
		}
		tags = append(tags, retag(doc, m.Name))
		slices = append(slices, openapi.Slice{Name: m.Name, Doc: doc})
	}
	doc := openapi.Merge(map[string]any{
		"title": "Fintech platform: the complete API", "version": h.build.Version, "license": openapi.License,
		"description": completeIntro + "\n\n" + openapi.IgnoredFields,
	}, slices)
	doc["tags"] = tags
	doc["x-tagGroups"] = tagGroups(mods)
	if err := foldMirrors(doc, routes); err != nil {
		return nil, err
	}
	return doc, nil
}

// serveInProcess answers a GET of path through the application's handler.
func serveInProcess(serve fasthttp.RequestHandler, path string) (int, []byte) {
	var req fasthttp.Request
	req.Header.SetMethod(http.MethodGet)
	req.SetRequestURI(path)
	var fctx fasthttp.RequestCtx
	fctx.Init(&req, nil, nil)
	serve(&fctx)
	return fctx.Response.StatusCode(), fctx.Response.Body()
}

// retag puts every operation of a module's slice under the module's one tag
// and returns that tag, described by the slice's title and description.
func retag(doc map[string]any, module string) map[string]any {
	for _, item := range asMap(doc["paths"]) {
		for _, op := range asMap(item) {
			if o, ok := op.(map[string]any); ok {
				o["tags"] = []any{module}
			}
		}
	}
	info := asMap(doc["info"])
	title, _ := info["title"].(string)
	desc, _ := info["description"].(string)
	desc = strings.TrimSuffix(strings.TrimSuffix(desc, openapi.IgnoredFields), "\n\n")
	tag := map[string]any{"name": module, "x-displayName": title}
	if desc == "" {
		desc = title
	}
	tag["description"] = desc
	doc["tags"] = []any{tag}
	return tag
}

// tagGroups groups the module tags for Redoc's navigation: the platform and
// identity, the spec's fintech modules, then every other module in mount
// order (a new module lands there by registering its slice).
func tagGroups(mods []schemas.PlatformModule) []any {
	fintech := map[string]bool{}
	for _, m := range fintechModules {
		fintech[m.name] = true
	}
	groups := []struct {
		name string
		tags []string
	}{{name: "Platform"}, {name: "Fintech modules"}, {name: "More modules"}}
	for _, m := range mods {
		switch {
		case m.Name == "platform" || m.Name == "auth":
			groups[0].tags = append(groups[0].tags, m.Name)
		case fintech[m.Name]:
			groups[1].tags = append(groups[1].tags, m.Name)
		default:
			groups[2].tags = append(groups[2].tags, m.Name)
		}
	}
	out := []any{}
	for _, g := range groups {
		if len(g.tags) > 0 {
			out = append(out, map[string]any{"name": g.name, "tags": g.tags})
		}
	}
	return out
}

// foldMirrors gives every operation also mounted under a proxy base (a
// route registered at <base>/api/... beside /api/...) the servers of both
// mounts, so the document lists it once. A mirror whose twin is not in the
// document is an error: the document would miss a route.
func foldMirrors(doc map[string]any, routes []server.Route) error {
	registered := map[string]bool{}
	for _, r := range routes {
		registered[r.Method+" "+r.Path] = true
	}
	bases := map[string][]string{}
	for _, r := range routes {
		i := strings.Index(r.Path, "/api/")
		if i <= 0 || !registered[r.Method+" "+r.Path[i:]] {
			continue
		}
		path, _ := openapi.Path(r.Path[i:])
		key := strings.ToLower(r.Method) + " " + path
		bases[key] = append(bases[key], r.Path[:i])
	}
	paths := asMap(doc["paths"])
	for key, bs := range bases {
		method, path, _ := strings.Cut(key, " ")
		op, ok := asMap(paths[path])[method].(map[string]any)
		if !ok {
			return fmt.Errorf("complete document: %s is mounted under %v but not in any slice", key, bs)
		}
		sort.Strings(bs)
		servers := []any{map[string]any{"url": "/", "description": "the platform"}}
		for _, b := range bs {
			servers = append(servers, map[string]any{"url": b, "description": "the proxy base " + b + " (the same operation)"})
		}
		op["servers"] = servers
	}
	return nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
