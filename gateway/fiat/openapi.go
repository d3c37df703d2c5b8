package fiat

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// publicRoutes need no bearer token: public reads, the processor's signed
// callbacks, the local checkout pages and the merchant charge (X-API-Key).
var publicRoutes = map[string]bool{
	"GET " + Prefix + "/health":                   true,
	"GET " + Prefix + "/openapi.json":             true,
	"GET " + Prefix + "/wallets/:id/public":       true,
	"POST " + Prefix + "/deposit/webhook":         true,
	"POST " + Prefix + "/processor/webhook":       true,
	"GET " + Prefix + "/checkout/:sessionId":      true,
	"POST " + Prefix + "/checkout/:sessionId/pay": true,
	"POST " + Prefix + "/merchant/charge":         true,
	"GET " + Prefix + "/requests/:token":          true,
	"POST " + Prefix + pathChargeRefunds:          true,
	"GET " + Prefix + pathChargeRefunds:           true,
}

// openAPIDoc describes the fiat slice.
var openAPIDoc = openapi.Doc{
	Title:    "Fiat wallet API",
	Prefixes: []string{Prefix},
	Public:   func(method, path string) bool { return publicRoutes[method+" "+path] },
	Operation: func(r server.Route, op map[string]any) {
		refundOperation(r, op)
		if r.Method == http.MethodPost && r.Path == Prefix+"/merchant/charge" {
			op["parameters"] = append(asList(op["parameters"]), map[string]any{"name": "X-API-Key", "in": "header",
				"required": true, "schema": map[string]any{"type": "string"}})
		}
	},
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(openapi.Build(h.cfg.Routes(), openAPIDoc))
}
