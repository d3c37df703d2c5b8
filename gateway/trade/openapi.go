package trade

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes(), Prefix))
}

// OpenAPI builds an OpenAPI 3.0 document of the routes under prefix from
// their typed declarations; routes not in public need a bearer token.
func OpenAPI(routes []server.Route, prefix string) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title: "Test-net wallet",
		Description: "Accounts in the test-net unit TNU. Amounts are JSON numbers with at most 7 decimal places, " +
			"stored exactly as integers of 10^-7 TNU.",
		Prefixes: []string{prefix},
	})
}
