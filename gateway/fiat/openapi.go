package fiat

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openAPIDoc describes the fiat slice: every route under Prefix, from its
// typed declaration. The routes of gateway/webhooks mounted under Prefix
// are in the slice too; the two that do not answer JSON are described here
// for as long as that module does not declare them itself.
var openAPIDoc = openapi.Doc{
	Title:    "Fiat wallet API",
	Prefixes: []string{Prefix},
	Operation: func(r server.Route, op map[string]any) {
		if r.Decl != nil {
			return
		}
		switch r.Method + " " + r.Path {
		case "GET " + Prefix + "/admin/stream":
			op["responses"] = map[string]any{"200": map[string]any{"description": "the admin event stream page (it holds no data)",
				"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}}
		case "GET " + Prefix + "/admin/events":
			op["responses"] = map[string]any{"200": map[string]any{"description": "server-sent events of every platform event",
				"content": map[string]any{"text/event-stream": map[string]any{"schema": map[string]any{"type": "string"}}}},
				"403": openapi.ErrorAnswer("forbidden: fiat admins only")}
		}
	},
}

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPIDocument(h.routes()))
}

// OpenAPIDocument builds the fiat slice of routes.
func OpenAPIDocument(routes []server.Route) map[string]any {
	return openapi.Build(routes, openAPIDoc)
}
