package ledger

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/server"
)

// OpenAPISlice builds the OpenAPI 3.0 document of the routes registered
// under prefix, so the slice always matches the real routes. Fiber's :param
// segments become {param}.
func OpenAPISlice(title, prefix string, routes []server.Route) map[string]any {
	paths := map[string]any{}
	for _, r := range routes {
		if !strings.HasPrefix(r.Path, prefix+"/") {
			continue
		}
		segs := strings.Split(r.Path, "/")
		var params []any
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				name := strings.TrimPrefix(s, ":")
				segs[i] = "{" + name + "}"
				params = append(params, map[string]any{"name": name, "in": "path", "required": true,
					"schema": map[string]any{"type": "string"}})
			}
		}
		path := strings.Join(segs, "/")
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		op := map[string]any{"summary": r.Summary, "x-rate-limit-class": r.Class.String(),
			"responses": map[string]any{"default": map[string]any{"description": "JSON; errors are { error, message }"}}}
		if len(params) > 0 {
			op["parameters"] = params
		}
		item[strings.ToLower(r.Method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": title, "version": "1.0.0"},
		"paths":   paths,
	}
}

// OpenAPIHandler serves OpenAPISlice of the routes known when it is called.
func OpenAPIHandler(title, prefix string, routes func() []server.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var rs []server.Route
		if routes != nil {
			rs = routes()
		}
		return c.JSON(OpenAPISlice(title, prefix, rs))
	}
}
