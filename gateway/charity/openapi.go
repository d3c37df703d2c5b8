package charity

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes()))
}

// OpenAPI builds the charity slice of the routes from their typed
// declarations.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Charity campaigns",
		Description: "Campaigns proposed by users and approved by charity admins; donations from KZT wallets settle through the wallet pipeline.",
		Prefixes:    []string{Prefix},
	})
}
