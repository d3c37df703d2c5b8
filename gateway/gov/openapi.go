package gov

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

// OpenAPI builds the OpenAPI 3.0 document of the governance routes among
// routes from their typed declarations.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Governance",
		Description: "Proposals, ballots in three vote modes (yes-no-abstain, ranked-choice, weighted) and their exact tallies.",
		Prefixes:    []string{Prefix},
	})
}
