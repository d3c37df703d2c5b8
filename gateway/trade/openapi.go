package trade

import (
	"net/http"
	"sort"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes(), Prefix, publicPaths))
}

// OpenAPI builds an OpenAPI 3.0 document of the routes under prefix, with the
// trade module's request and response schemas; routes not in public need a
// bearer token.
func OpenAPI(routes []server.Route, prefix string, public map[string]bool) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title: "Test-net wallet",
		Description: "Accounts in the test-net unit TNU. Amounts are JSON numbers with at most 7 decimal places, " +
			"stored exactly as integers of 10^-7 TNU.",
		Prefixes: []string{prefix},
		Public:   func(_, path string) bool { return public[path] },
		Schemas:  componentSchemas,
		Operation: func(r server.Route, op map[string]any) {
			op["responses"] = responsesFor(r.Method, r.Path)
			if body, ok := requestBodies[r.Method+" "+r.Path]; ok {
				op["requestBody"] = map[string]any{"required": true, "content": jsonContent(ref(body))}
			} else {
				delete(op, "requestBody")
			}
		},
	})
}

var (
	ref         = openapi.Ref
	jsonContent = openapi.JSONContent
)

var requestBodies = map[string]string{
	"POST " + Prefix + "/topup":    "TopUpRequest",
	"POST " + Prefix + "/transfer": "TransferRequest",
}

// responsesFor documents the answers of one operation.
func responsesFor(method, path string) map[string]any {
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(ref("Error"))}
	}
	ok := func(desc string, schema map[string]any) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(schema)}
	}
	out := map[string]any{}
	switch method + " " + path {
	case "GET " + Prefix + "/accounts":
		out["200"] = ok("the caller's account", listOf("Account"))
	case "GET " + Prefix + "/accounts/lookup":
		out["200"] = ok("the account of that e-mail", ref("Lookup"))
		out["404"] = errResp("account_not_found")
		out["422"] = errResp("validation_failed")
	case "POST " + Prefix + "/topup":
		out["200"] = ok("the account after the top-up", ref("TopUpResult"))
		out["404"] = errResp("account_not_found: not an account of the caller")
		out["409"] = errResp("idempotency_key_reused")
		out["422"] = errResp("validation_failed")
	case "POST " + Prefix + "/transfer":
		out["201"] = ok("the transfer", ref("Transfer"))
		out["400"] = errResp("insufficient_balance")
		out["404"] = errResp("account_not_found")
		out["409"] = errResp("idempotency_key_reused")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/operations":
		out["200"] = ok("the caller's operations", listOf("Operation"))
		out["400"] = errResp("invalid_cursor")
	case "GET " + Prefix + "/operations.csv":
		out["200"] = map[string]any{"description": "RFC 4180 CSV: id,kind,amount,from,to,createdAt",
			"content": map[string]any{"text/csv": map[string]any{"schema": map[string]any{"type": "string"}}}}
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if method != http.MethodGet || (path != Prefix+"/health" && path != Prefix+"/openapi.json") {
		out["401"] = errResp("auth_required")
	}
	return out
}

func listOf(name string) map[string]any {
	return map[string]any{"type": "object", "required": []string{"items", "total", "nextCursor"}, "properties": map[string]any{
		"items":      map[string]any{"type": "array", "items": ref(name)},
		"total":      integer,
		"nextCursor": map[string]any{"type": "string", "nullable": true},
	}}
}

func obj(required []string, props map[string]any) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		m["required"] = required
	}
	return m
}

var (
	str          = map[string]any{"type": "string"}
	integer      = map[string]any{"type": "integer", "format": "int64"}
	datetime     = map[string]any{"type": "string", "format": "date-time"}
	amountSchema = map[string]any{"type": "number", "exclusiveMinimum": true, "minimum": 0, "multipleOf": 0.0000001,
		"description": "TNU, at most 7 decimal places"}
)

var componentSchemas = map[string]any{
	"Account": obj([]string{"id", "balance", "currency", "createdAt"}, map[string]any{
		"id": str, "balance": amountSchema, "currency": map[string]any{"type": "string", "enum": []string{"TNU"}}, "createdAt": datetime,
	}),
	"Lookup":       obj([]string{"id", "owner"}, map[string]any{"id": str, "owner": str}),
	"TopUpRequest": obj([]string{"accountId", "amount"}, map[string]any{"accountId": str, "amount": amountSchema}),
	"TopUpResult": obj([]string{"id", "balance", "updatedAt"}, map[string]any{
		"id": str, "balance": amountSchema, "currency": str, "updatedAt": datetime, "operationId": str,
	}),
	"TransferRequest": obj([]string{"from", "to", "amount"}, map[string]any{"from": str, "to": str, "amount": amountSchema}),
	"Transfer": obj([]string{"id", "from", "to", "amount"}, map[string]any{
		"id": str, "from": str, "to": str, "amount": amountSchema, "currency": str, "createdAt": datetime,
	}),
	"Operation": obj([]string{"id", "kind", "amount", "from", "to", "createdAt"}, map[string]any{
		"id": str, "kind": map[string]any{"type": "string", "enum": []string{"topup", "transfer"}}, "amount": amountSchema,
		"from": map[string]any{"type": "string", "nullable": true}, "to": str, "createdAt": datetime,
	}),
}
