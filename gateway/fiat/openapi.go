package fiat

import (
	"net/http"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// OpenAPI builds the OpenAPI 3.0 slice of the routes under prefix, from the
// routes the server really registered, so it cannot drift from them.
func OpenAPI(routes []server.Route, prefix, title, version string) map[string]any {
	paths := map[string]map[string]any{}
	for _, r := range routes {
		if r.Path != prefix && !strings.HasPrefix(r.Path, prefix+"/") {
			continue
		}
		path, params := openAPIPath(r.Path)
		item := paths[path]
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		op := map[string]any{
			"summary":            r.Summary,
			"operationId":        operationID(r.Method, r.Path),
			"tags":               []string{strings.TrimPrefix(prefix, "/api/")},
			"x-rate-limit-class": r.Class.String(),
			"responses": map[string]any{
				"default": map[string]any{"description": "JSON body; errors are {error, message}",
					"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}},
			},
		}
		var ps []map[string]any
		for _, p := range params {
			ps = append(ps, map[string]any{"name": p, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		if len(ps) > 0 {
			op["parameters"] = ps
		}
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			op["requestBody"] = map[string]any{"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"type": "object"}}}}
		}
		if r.Class == ratelimit.Money {
			op["parameters"] = append(ps, map[string]any{"name": "Idempotency-Key", "in": "header", "required": false,
				"schema": map[string]any{"type": "string", "maxLength": maxIdempotencyKey}})
		}
		item[strings.ToLower(r.Method)] = op
	}
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ordered := make(map[string]any, len(paths))
	for _, k := range keys {
		ordered[k] = paths[k]
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": title, "version": version},
		"paths":   ordered,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
			"schemas": map[string]any{"Error": map[string]any{"type": "object", "required": []string{"error", "message"},
				"properties": map[string]any{"error": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"}}}},
		},
	}
}

// openAPIPath turns fiber's /a/:id/b into /a/{id}/b and lists the params.
func openAPIPath(p string) (string, []string) {
	parts := strings.Split(p, "/")
	var params []string
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			name := strings.TrimSuffix(strings.TrimPrefix(s, ":"), "?")
			params = append(params, name)
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/"), params
}

func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, s := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == ':' || r == '-' }) {
		if s == "api" {
			continue
		}
		b.WriteString(strings.ToUpper(s[:1]) + s[1:])
	}
	return b.String()
}

func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.cfg.Routes(), Prefix, "Fiat wallet API", "1.0.0"))
}
