package reputation

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

// OpenAPI builds the reputation slice from the typed declarations of the
// routes under Prefix. POST /events takes the service key
// (HeaderServiceKey) or an admin bearer token.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Reputation",
		Description: "Weighted events raise or lower a user's score; the score names the rank.",
		Prefixes:    []string{Prefix},
	})
}
