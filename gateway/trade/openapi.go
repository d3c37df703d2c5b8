package trade

import (
	"net/http"

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
		Prefixes:  []string{prefix},
		Public:    func(_, path string) bool { return public[path] },
		Schemas:   componentSchemas,
		Bodies:    requestBodies,
		Responses: responsesFor,
	})
}

var requestBodies = map[string]string{
	"POST " + Prefix + "/topup":    "TopUpRequest",
	"POST " + Prefix + "/transfer": "TransferRequest",
}

// responsesFor documents the answers of one operation.
func responsesFor(method, path string) map[string]any {
	errResp := openapi.ErrorAnswer
	ok := func(desc string, schema map[string]any) map[string]any {
		return map[string]any{"description": desc, "content": openapi.JSONContent(schema)}
	}
	out := map[string]any{}
	switch method + " " + path {
	case "GET " + Prefix + "/accounts":
		out["200"] = ok("the caller's account", listOf("Account"))
	case "GET " + Prefix + "/accounts/lookup":
		out["200"] = ok("the account of that e-mail", openapi.Ref("Lookup"))
		out["404"] = errResp("account_not_found")
		out["422"] = errResp("validation_failed")
	case "POST " + Prefix + "/topup":
		out["200"] = ok("the account after the top-up", openapi.Ref("TopUpResult"))
		out["404"] = errResp("account_not_found: not an account of the caller")
		out["409"] = errResp("idempotency_key_reused")
		out["422"] = errResp("validation_failed")
	case "POST " + Prefix + "/transfer":
		out["201"] = ok("the transfer", openapi.Ref("Transfer"))
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
		"items":      map[string]any{"type": "array", "items": openapi.Ref(name)},
		"total":      openapi.Int64,
		"nextCursor": map[string]any{"type": "string", "nullable": true},
	}}
}

var (
	amountSchema = map[string]any{"type": "number", "exclusiveMinimum": true, "minimum": 0, "multipleOf": 0.0000001,
		"description": "TNU, at most 7 decimal places"}
	balanceSchema = map[string]any{"type": "number", "minimum": 0, "multipleOf": 0.0000001,
		"description": "TNU, at most 7 decimal places"}
)

var componentSchemas = map[string]any{
	"Account": openapi.Obj([]string{"id", "balance", "currency", "createdAt"}, map[string]any{
		"id": openapi.Str, "balance": balanceSchema, "currency": map[string]any{"type": "string", "enum": []string{"TNU"}}, "createdAt": openapi.DateTime,
	}),
	"Lookup":       openapi.Obj([]string{"id", "owner"}, map[string]any{"id": openapi.Str, "owner": openapi.Str}),
	"TopUpRequest": openapi.Obj([]string{"accountId", "amount"}, map[string]any{"accountId": openapi.Str, "amount": amountSchema}),
	"TopUpResult": openapi.Obj([]string{"id", "balance", "updatedAt"}, map[string]any{
		"id": openapi.Str, "balance": balanceSchema, "currency": openapi.Str, "updatedAt": openapi.DateTime, "operationId": openapi.Str,
	}),
	"TransferRequest": openapi.Obj([]string{"from", "to", "amount"}, map[string]any{"from": openapi.Str, "to": openapi.Str, "amount": amountSchema}),
	"Transfer": openapi.Obj([]string{"id", "from", "to", "amount"}, map[string]any{
		"id": openapi.Str, "from": openapi.Str, "to": openapi.Str, "amount": amountSchema, "currency": openapi.Str, "createdAt": openapi.DateTime,
	}),
	"Operation": openapi.Obj([]string{"id", "kind", "amount", "from", "to", "createdAt"}, map[string]any{
		"id": openapi.Str, "kind": map[string]any{"type": "string", "enum": []string{"topup", "transfer"}}, "amount": amountSchema,
		"from": map[string]any{"type": "string", "nullable": true}, "to": openapi.Str, "createdAt": openapi.DateTime,
	}),
}
