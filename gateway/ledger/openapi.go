package ledger

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes()))
}

// OpenAPI builds the ledger slice from the typed declarations of the routes
// under Prefix.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Ledger",
		Description: "An append-only, hash-chained journal of platform events; every entry links to the hash of the one before it.",
		Prefixes:    []string{Prefix},
	})
}
