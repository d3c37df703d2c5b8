package mask

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
// mask module's request and response schemas; routes not in public need a
// bearer token.
func OpenAPI(routes []server.Route, prefix string, public map[string]bool) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Virtual payment masks",
		Description: "Virtual cards that stand in for a real card. No real card data is stored or shown: only the virtual PAN.",
		Prefixes:    []string{prefix},
		Public:      func(_, path string) bool { return public[path] },
		Schemas:     componentSchemas,
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
	"POST " + Prefix + "/masks":   "CreateMaskRequest",
	"POST " + Prefix + "/charges": "CreateChargeRequest",
}

// responsesFor documents the answers of one operation.
func responsesFor(method, path string) map[string]any {
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(ref("Error"))}
	}
	out := map[string]any{}
	switch method + " " + path {
	case "POST " + Prefix + "/masks":
		out["201"] = map[string]any{"description": "the issued mask", "content": jsonContent(ref("Mask"))}
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/masks":
		out["200"] = map[string]any{"description": "the caller's active masks", "content": jsonContent(listOf("Mask"))}
	case "POST " + Prefix + "/masks/:id/revoke":
		out["200"] = map[string]any{"description": "the revoked mask", "content": jsonContent(ref("Mask"))}
		out["404"] = errResp("not_found: no such mask of the caller")
	case "POST " + Prefix + "/charges":
		out["201"] = map[string]any{"description": "authorized", "content": jsonContent(ref("Charge"))}
		out["200"] = map[string]any{"description": "replay of an authorized (maskId, paymentRef): idempotent true", "content": jsonContent(ref("Charge"))}
		out["402"] = map[string]any{"description": "charge_declined", "content": jsonContent(ref("ChargeDeclined"))}
		out["404"] = errResp("not_found: no such mask of the caller")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/charges":
		out["200"] = map[string]any{"description": "the caller's charges", "content": jsonContent(listOf("Charge"))}
	case "GET " + Prefix + "/stats":
		out["200"] = map[string]any{"description": "roll-up", "content": jsonContent(ref("Stats"))}
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if method != http.MethodGet || (path != Prefix+"/health" && path != Prefix+"/openapi.json") {
		out["401"] = errResp("auth_required")
	}
	return out
}

func listOf(name string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"items":      map[string]any{"type": "array", "items": ref(name)},
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
	str      = map[string]any{"type": "string"}
	integer  = map[string]any{"type": "integer", "format": "int64"}
	number   = map[string]any{"type": "number"}
	boolean  = map[string]any{"type": "boolean"}
	datetime = map[string]any{"type": "string", "format": "date-time"}
	kinds    = map[string]any{"type": "string", "enum": []string{"single-use", "recurring", "merchant-locked", "category-locked"}}
	reasons  = map[string]any{"type": "string", "enum": []string{"limit_exceeded", "merchant_locked", "category_locked",
		"mask_revoked", "mask_expired", "single_use_consumed", "risk_declined"}}
	factor = obj([]string{"factor", "points"}, map[string]any{"factor": str, "points": integer})
	charge = obj([]string{"id", "maskId", "paymentRef", "amountCents", "status", "riskScore", "riskFactors", "idempotent"},
		map[string]any{
			"id": str, "maskId": str, "userId": str, "paymentRef": str, "amountCents": integer, "currency": str,
			"merchant": str, "merchantCategory": str,
			"status":         map[string]any{"type": "string", "enum": []string{"authorized", "declined"}},
			"declineReason":  reasons,
			"riskScore":      map[string]any{"type": "integer", "minimum": 0, "maximum": 100},
			"riskFactors":    map[string]any{"type": "array", "items": factor},
			"remainingCents": integer, "createdAt": datetime, "idempotent": boolean,
		})
)

var componentSchemas = map[string]any{
	"CreateMaskRequest": obj([]string{"kind", "spendLimitCents"}, map[string]any{
		"label": str, "kind": kinds, "lockedToMerchant": str, "lockedToCategory": str,
		"currency": str, "spendLimitCents": integer, "expiresAt": datetime,
	}),
	"Mask": obj([]string{"id", "virtualPan", "remainingCents", "status"}, map[string]any{
		"id": str, "userId": str, "label": str, "kind": kinds, "lockedToMerchant": str, "lockedToCategory": str,
		"currency": str, "spendLimitCents": integer, "remainingCents": integer,
		"virtualPan": map[string]any{"type": "string", "pattern": "^vmask-[0-9a-f]{32}$"},
		"status":     map[string]any{"type": "string", "enum": []string{"active", "revoked", "expired"}},
		"expiresAt":  datetime, "createdAt": datetime, "revokedAt": datetime,
	}),
	"CreateChargeRequest": obj([]string{"maskId", "amountCents", "merchant", "paymentRef"}, map[string]any{
		"maskId": str, "amountCents": integer, "merchant": str, "merchantCategory": str, "paymentRef": str, "merchantUserId": str,
	}),
	"Charge": charge,
	"ChargeDeclined": obj([]string{"error", "declineReason", "riskScore", "charge"}, map[string]any{
		"error": str, "message": str, "declineReason": reasons, "riskScore": integer,
		"riskFactors": map[string]any{"type": "array", "items": factor}, "idempotent": boolean, "charge": charge,
	}),
	"Stats": obj(nil, map[string]any{
		"activeMasks": integer, "totalSpendCents": integer,
		"spendByCurrency": map[string]any{"type": "object", "additionalProperties": integer},
		"charges":         integer, "authorizedCharges": integer, "declinedCharges": integer,
		"declineRate": number, "meanRiskScore": number,
	}),
}
