package fiat

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openAPIDoc describes the fiat slice: every route under Prefix (the routes
// of gateway/webhooks mounted there too), from its typed declaration.
var openAPIDoc = openapi.Doc{Title: "Fiat wallet API", Prefixes: []string{Prefix}}

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPIDocument(h.routes()))
}

// OpenAPIDocument builds the fiat slice of routes.
func OpenAPIDocument(routes []server.Route) map[string]any {
	return openapi.Build(routes, openAPIDoc)
}
