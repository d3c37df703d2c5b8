package constitution

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi serves the OpenAPI 3.0 slice of the routes registered under
// prefix (one of the two modules, at /api or under the proxy base).
func (h *Handlers) openapi(prefix string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return c.JSON(OpenAPI(h.routes(), prefix))
	}
}

// OpenAPI builds the document of the routes under prefix from their typed
// declarations (server.Op): the public reads say so themselves.
func OpenAPI(routes []server.Route, prefix string) map[string]any {
	title, desc := "Constitution scenarios", "Scenario builder with eight sliders, computed regimes and metrics, an AI advisor and PDF reports."
	if strings.HasSuffix(prefix, PlanetPrefix) {
		title, desc = "Planet catalog of constitution artifacts", "Published scenarios with similarity search, votes and comments. Reads need no token."
	}
	return openapi.Build(routes, openapi.Doc{Title: title, Description: desc, Prefixes: []string{prefix}})
}
