package identity

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// Prefix is where the identity routes are mounted.
const Prefix = "/api/auth"

// openapi answers the module's OpenAPI 3.0 slice (/api/auth/openapi.json),
// generated from the routes the server actually registered under Prefix.
// The full document carries it too, so that a client SDK can register and
// log in.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes()))
}

// OpenAPI builds the identity slice from the typed declarations of the
// routes under Prefix.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Identity",
		Description: "Registration, login, the caller's profile and e-mail verification. Tokens are HS256 JWTs sent as `Authorization: Bearer <token>`.",
		Prefixes:    []string{Prefix},
	})
}
