package platform

import (
	"bytes"
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
const completeIntro = "Every operation of every module this build serves, one tag per module; a module's admin operations " +
	"have a tag of their own, listed after every module's user operations with the console and assets. " +
	"Each operation's description says who may call it (public, a user's bearer token, an admin role, " +
	"a partner key or signature) and what it changes.\n\n" +
	"Most operations take `Authorization: Bearer <token>`, the token POST /api/auth/register or " +
	"POST /api/auth/login answers. Errors are `{ error, message, fields? }` with a stable code; writes " +
	"accept an `Idempotency-Key` (one is assigned and echoed when absent); lists page with " +
	"`{ items, nextCursor }`. Every operation shows a curl command and a call of the TypeScript SDK (" + SDKPackage + "), " +
	"with `$TOKEN` the bearer token.\n\n" +
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
		raw, err := marshalComplete(doc)
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
	if err := foldMirrors(doc, routes); err != nil {
		return nil, err
	}
	doc["tags"], doc["x-tagGroups"] = splitTags(doc, tags, mods)
	openapi.AddExamples(doc)
	openapi.AddCodeSamples(doc, SDKPackage)
	return doc, nil
}

// Tags of the operations a user does not call: each module's admin
// operations (a required role, or under an /admin/ path) have the tag
// <module>-admin, and the admin console's page and the vendored scripts
// (assets) the tag console. They stay in the document (it lists every
// route the platform serves, and the e2e harness checks answers against it)
// but are grouped after every module's user operations.
const (
	adminTagSuffix = "-admin"
	consoleTag     = "console"
)

// splitTags moves the admin operations of every module to the module's
// admin tag and the console and asset routes to the console tag, and
// returns the tags and Redoc's x-tagGroups: sign-in (auth) first, the
// fintech modules, the other modules, the platform's documents, then the
// admin operations and last the console and assets.
func splitTags(doc map[string]any, moduleTags []any, mods []schemas.PlatformModule) ([]any, []any) {
	used := map[string]bool{}
	for path, item := range asMap(doc["paths"]) {
		for _, o := range asMap(item) {
			op := asMap(o)
			tags, _ := op["tags"].([]any)
			if len(tags) != 1 {
				continue
			}
			module, _ := tags[0].(string)
			switch {
			case isAsset(path, op):
				module = consoleTag
			case isAdmin(path, op):
				module += adminTagSuffix
			}
			op["tags"] = []any{module}
			used[module] = true
		}
	}
	var tags, adminTags []any
	byName := map[string]map[string]any{}
	for _, t := range moduleTags {
		tag := asMap(t)
		name, _ := tag["name"].(string)
		byName[name] = tag
	}
	// The tags in the order of the groups.
	var groups []any
	var adminNames []string
	for _, g := range tagGroups(mods) {
		group := asMap(g)
		var user []string
		for _, name := range group["tags"].([]string) {
			tags = append(tags, byName[name])
			if used[name+adminTagSuffix] {
				display, _ := byName[name]["x-displayName"].(string)
				if display == "" {
					display = name
				}
				adminTags = append(adminTags, map[string]any{"name": name + adminTagSuffix, "x-displayName": display + " (admin)",
					"description": "The operations of the " + name + " module that only its admins (or its operators' services) call."})
				adminNames = append(adminNames, name+adminTagSuffix)
			}
			user = append(user, name)
		}
		group["tags"] = user
		groups = append(groups, group)
	}
	tags = append(tags, adminTags...)
	if len(adminNames) > 0 {
		groups = append(groups, map[string]any{"name": "Operations (admin)", "tags": adminNames})
	}
	if used[consoleTag] {
		tags = append(tags, map[string]any{"name": consoleTag, "x-displayName": "Console & assets",
			"description": "The admin console's page and the scripts browsers load (the console's charts, the docs renderer, " +
				"the embeddable widget): routes a browser fetches, not API calls."})
		groups = append(groups, map[string]any{"name": "Console & assets", "tags": []string{consoleTag}})
	}
	return tags, groups
}

// isAdmin reports whether an operation is for a module's admins: it
// requires a role, or lies under an /admin/ path.
func isAdmin(path string, op map[string]any) bool {
	_, role := op["x-required-role"]
	return role || strings.Contains(path, "/admin/")
}

// isAsset reports whether a route is the admin console's page or a script a
// page loads.
func isAsset(path string, op map[string]any) bool {
	if path == "/admin" || strings.HasPrefix(path, "/admin/") {
		return true
	}
	for status, r := range asMap(op["responses"]) {
		if strings.HasPrefix(status, "2") && asMap(asMap(r)["content"])["text/javascript"] != nil {
			return true
		}
	}
	return false
}

// leadOperations open their tag: the first calls of every integration
// (register, then log in), before the tag's other operations.
var leadOperations = []string{"/api/auth/register", "/api/auth/login"}

// pathOrder is the order of the document's paths, which is Redoc's order of
// the operations within a tag: the lead operations, then a module's user
// operations by path, its plumbing (health, its OpenAPI slice), and the
// admin, console and asset routes last (so the document opens on a user's
// call whatever reads it).
func pathOrder(paths map[string]any) []string {
	rank := func(p string) int {
		for i, l := range leadOperations {
			if p == l {
				return i
			}
		}
		for _, o := range asMap(paths[p]) {
			if tags, _ := asMap(o)["tags"].([]any); len(tags) == 1 {
				if t, _ := tags[0].(string); t == consoleTag || strings.HasSuffix(t, adminTagSuffix) {
					return len(leadOperations) + 2
				}
			}
		}
		if strings.HasSuffix(p, "/health") || strings.HasSuffix(p, "/openapi.json") || strings.HasSuffix(p, "/slice.json") {
			return len(leadOperations) + 1
		}
		return len(leadOperations)
	}
	out := make([]string, 0, len(paths))
	for p := range paths {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// marshalComplete encodes the complete document with its paths in
// pathOrder (a Go map would encode them sorted by path).
func marshalComplete(doc map[string]any) ([]byte, error) {
	paths := asMap(doc["paths"])
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range pathOrder(paths) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		item, err := json.Marshal(paths[p])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(item)
	}
	b.WriteByte('}')
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	out["paths"] = json.RawMessage(b.Bytes())
	return json.Marshal(out)
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

// tagGroups groups the module tags for Redoc's navigation: sign-in (auth)
// first, the spec's fintech modules, every other module in mount order (a
// new module lands there by registering its slice), and the platform's own
// documents and health last.
func tagGroups(mods []schemas.PlatformModule) []any {
	fintech := map[string]bool{}
	for _, m := range fintechModules {
		fintech[m.name] = true
	}
	groups := []struct {
		name string
		tags []string
	}{{name: "Accounts"}, {name: "Fintech modules"}, {name: "More modules"}, {name: "Platform"}}
	for _, m := range mods {
		switch {
		case m.Name == "auth":
			groups[0].tags = append(groups[0].tags, m.Name)
		case m.Name == "platform":
			groups[3].tags = append(groups[3].tags, m.Name)
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
