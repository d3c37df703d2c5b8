package fiat

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
	store "github.com/fintech/platform/storage/fiat"
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
	Schemas:  componentSchemas,
	Prefixes: []string{Prefix},
	Public:   func(method, path string) bool { return publicRoutes[method+" "+path] },
	Operation: func(r server.Route, op map[string]any) {
		refundOperation(r, op)
		switch r.Method + " " + r.Path {
		case "POST " + Prefix + "/admin/wallets/:id/freeze", "POST " + Prefix + "/admin/wallets/:id/unfreeze":
			delete(op, "requestBody") // the body, if any, is not read
		case "GET " + Prefix + "/requests/:token":
			page := map[string]any{"schema": map[string]any{"type": "string"}}
			orPage := func(a map[string]any) map[string]any {
				a["content"].(map[string]any)["text/html"] = page
				return a
			}
			op["responses"] = map[string]any{
				"200": orPage(map[string]any{"description": "the request as JSON, or its pay page with Accept: text/html",
					"content": openapi.JSONContent(map[string]any{"type": "object"})}),
				"404": orPage(openapi.ErrorAnswer(errRequestNotFound.Code + ": no such payment request")),
				"410": orPage(openapi.ErrorAnswer(errRequestGone.Code + ": the payment request has expired")),
			}
		case "POST " + Prefix + "/wallets":
			op["requestBody"] = map[string]any{"required": true, "description": openapi.IgnoredFields,
				"content": openapi.JSONContent(openapi.Ref("CreateWalletRequest"))}
			op["responses"] = map[string]any{
				"201": openapi.Answer("the new wallet", "Wallet"),
				"409": openapi.ErrorAnswer("wallet_exists: the caller has a wallet in this currency"),
			}
		case "GET " + Prefix + "/wallets":
			op["responses"] = map[string]any{"200": map[string]any{"description": "the caller's wallets",
				"content": openapi.JSONContent(openapi.Obj([]string{"items"}, map[string]any{"items": map[string]any{"type": "array", "items": openapi.Ref("Wallet")}}))}}
		case "GET " + Prefix + "/wallets/:id/public":
			op["responses"] = map[string]any{
				"200": openapi.Answer("what a payer needs to recognise a receive link: no e-mail, user id or balance", "PublicWallet"),
				"404": openapi.ErrorAnswer(errWalletNotFound.Code + ": no such wallet"),
			}
		case "GET " + Prefix + "/checkout/:sessionId":
			op["responses"] = map[string]any{"200": map[string]any{"description": "the local checkout page of the test processor",
				"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}},
				"404": openapi.ErrorAnswer("session_not_found: no such checkout session")}
		case "GET " + Prefix + "/admin/stream":
			op["responses"] = map[string]any{"200": map[string]any{"description": "the admin event stream page (it holds no data)",
				"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}}
		case "GET " + Prefix + "/admin/events":
			op["responses"] = map[string]any{"200": map[string]any{"description": "server-sent events of every platform event",
				"content": map[string]any{"text/event-stream": map[string]any{"schema": map[string]any{"type": "string"}}}},
				"403": openapi.ErrorAnswer("forbidden: fiat admins only")}
		case "GET " + Prefix + "/transactions.csv":
			op["responses"] = map[string]any{"200": map[string]any{"description": "the caller's transactions as CSV",
				"content": map[string]any{"text/csv": map[string]any{"schema": map[string]any{"type": "string"}}}}}
		}
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

var (
	walletStatus = map[string]any{"type": "string", "enum": []string{store.StatusActive, store.StatusFrozen}}
	currency     = map[string]any{"type": "string", "enum": currencies}
)

// componentSchemas are the fiat bodies described so far; the other
// operations keep the generic 2XX and 4XX answers.
var componentSchemas = map[string]any{
	"CreateWalletRequest": openapi.Obj([]string{"currency"}, map[string]any{
		"currency": map[string]any{"type": "string", "description": "KZT or USD (any case)"},
	}),
	"Wallet": openapi.Obj([]string{"id", "currency", "balance", "status", "createdAt"}, map[string]any{
		"id": openapi.KSUID, "currency": currency, "balance": openapi.MinorUnits, "status": walletStatus, "createdAt": openapi.DateTime,
	}),
	"PublicWallet": openapi.Obj([]string{"id", "currency", "status", "ownerName"}, map[string]any{
		"id": openapi.KSUID, "currency": currency, "status": walletStatus, "ownerName": openapi.Str,
	}),
}
