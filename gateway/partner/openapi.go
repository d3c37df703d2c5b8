package partner

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the OpenAPI 3.0 slice of one of the rails' prefixes,
// generated from the routes the server registered under it.
func (h *Handlers) openapi(prefix string) fiber.Handler {
	return func(c *fiber.Ctx) error { return c.JSON(OpenAPI(h.routes(), prefix)) }
}

var titles = map[string]string{
	PrefixRights:    "Royalties (partner rail)",
	PrefixChess:     "Tournament prizes (partner rail)",
	PrefixCert:      "Certification payouts (partner rail)",
	PrefixEcosystem: "Ecosystem earnings",
}

// OpenAPI builds the document of the routes under prefix from their typed
// declarations (which also say which routes need no bearer token: health,
// the slices, the schedule, and the receivers, which are signed instead).
func OpenAPI(routes []server.Route, prefix string) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title: titles[prefix],
		Description: "Partner webhooks are authenticated with X-Platform-Signature (hex HMAC-SHA256 over " +
			"timestamp + \".\" + the raw body, optional sha256= prefix) and X-Platform-Timestamp (unix seconds, 300 s " +
			"tolerance), or the legacy per-receiver secret header unless WEBHOOK_REQUIRE_HMAC=1. Amounts are integer " +
			"KZT minor units; nothing moves money.",
		Prefixes: []string{prefix},
	})
}
