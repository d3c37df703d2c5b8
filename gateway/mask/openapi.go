package mask

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
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
		Bodies:      requestBodies,
		Responses:   responsesFor,
	})
}

var requestBodies = map[string]string{
	"POST " + Prefix + "/masks":   "CreateMaskRequest",
	"POST " + Prefix + "/charges": "CreateChargeRequest",
}

// responsesFor documents the answers of one operation.
func responsesFor(method, path string) map[string]any {
	errResp := openapi.ErrorAnswer
	out := map[string]any{}
	switch method + " " + path {
	case "POST " + Prefix + "/masks":
		out["201"] = map[string]any{"description": "the issued mask", "content": openapi.JSONContent(openapi.Ref("Mask"))}
		out["409"] = errResp("idempotency_key_reused: the Idempotency-Key came with another body")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/masks":
		out["200"] = map[string]any{"description": "the caller's active masks", "content": openapi.JSONContent(openapi.ListOf("Mask"))}
	case "POST " + Prefix + "/masks/:id/revoke":
		out["200"] = map[string]any{"description": "the revoked mask", "content": openapi.JSONContent(openapi.Ref("Mask"))}
		out["404"] = errResp("not_found: no such mask of the caller")
	case "POST " + Prefix + "/charges":
		out["201"] = map[string]any{"description": "authorized", "content": openapi.JSONContent(openapi.Ref("Charge"))}
		out["200"] = map[string]any{"description": "replay of an authorized (maskId, paymentRef): idempotent true", "content": openapi.JSONContent(openapi.Ref("Charge"))}
		out["402"] = map[string]any{"description": "charge_declined", "content": openapi.JSONContent(openapi.Ref("ChargeDeclined"))}
		out["404"] = errResp("not_found: no such mask of the caller")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/charges":
		out["200"] = map[string]any{"description": "the caller's charges", "content": openapi.JSONContent(openapi.ListOf("Charge"))}
		out["404"] = errResp("not_found: maskId names no mask of the caller")
	case "GET " + Prefix + "/stats":
		out["200"] = map[string]any{"description": "roll-up", "content": openapi.JSONContent(openapi.Ref("Stats"))}
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if method != http.MethodGet || (path != Prefix+"/health" && path != Prefix+"/openapi.json") {
		out["401"] = errResp("auth_required")
	}
	return out
}

var (
	kinds   = map[string]any{"type": "string", "enum": []string{"single-use", "recurring", "merchant-locked", "category-locked"}}
	reasons = map[string]any{"type": "string", "enum": []string{"limit_exceeded", "merchant_locked", "category_locked",
		"mask_revoked", "mask_expired", "single_use_consumed", "risk_declined"}}
	factor = openapi.Obj([]string{"factor", "points"}, map[string]any{"factor": openapi.Str, "points": openapi.Int64})
	charge = openapi.Obj([]string{"id", "maskId", "paymentRef", "amountCents", "status", "riskScore", "riskFactors", "idempotent"},
		map[string]any{
			"id": openapi.KSUID, "maskId": openapi.KSUID, "userId": openapi.KSUID, "paymentRef": openapi.Str, "amountCents": openapi.MinorUnits, "currency": openapi.Str,
			"merchant": openapi.Str, "merchantCategory": openapi.Str,
			"status":         map[string]any{"type": "string", "enum": []string{"authorized", "declined"}},
			"declineReason":  reasons,
			"riskScore":      map[string]any{"type": "integer", "minimum": 0, "maximum": 100},
			"riskFactors":    map[string]any{"type": "array", "items": factor},
			"remainingCents": openapi.MinorUnits, "createdAt": openapi.DateTime, "idempotent": openapi.Bool,
		})
)

var componentSchemas = map[string]any{
	"CreateMaskRequest": openapi.Obj([]string{"kind", "spendLimitCents"}, map[string]any{
		"label": openapi.Text(bind.MaxTitle), "kind": kinds, "lockedToMerchant": openapi.Text(bind.MaxTitle), "lockedToCategory": openapi.Text(bind.MaxTitle),
		"currency": openapi.Str, "spendLimitCents": openapi.Amount, "expiresAt": openapi.DateTime,
	}),
	"Mask": openapi.Obj([]string{"id", "virtualPan", "remainingCents", "status"}, map[string]any{
		"id": openapi.KSUID, "userId": openapi.KSUID, "label": openapi.Str, "kind": kinds, "lockedToMerchant": openapi.Str, "lockedToCategory": openapi.Str,
		"currency": openapi.Str, "spendLimitCents": openapi.MinorUnits, "remainingCents": openapi.MinorUnits,
		"virtualPan": map[string]any{"type": "string", "pattern": "^vmask-[0-9a-f]{32}$"},
		"status":     map[string]any{"type": "string", "enum": []string{"active", "revoked", "expired"}},
		"expiresAt":  openapi.DateTime, "createdAt": openapi.DateTime, "revokedAt": openapi.DateTime,
	}),
	"CreateChargeRequest": openapi.Obj([]string{"maskId", "amountCents", "merchant", "paymentRef"}, map[string]any{
		"maskId": openapi.Text(maxRef), "amountCents": openapi.Amount, "merchant": openapi.Text(bind.MaxTitle), "merchantCategory": openapi.Text(bind.MaxTitle),
		"paymentRef": openapi.Text(maxRef), "merchantUserId": openapi.Text(maxRef),
	}),
	"Charge": charge,
	"ChargeDeclined": openapi.Obj([]string{"error", "declineReason", "riskScore", "charge"}, map[string]any{
		"error": openapi.Str, "message": openapi.Str, "declineReason": reasons, "riskScore": openapi.Int64,
		"riskFactors": map[string]any{"type": "array", "items": factor}, "idempotent": openapi.Bool, "charge": charge,
	}),
	"Stats": openapi.Obj(nil, map[string]any{
		"activeMasks": openapi.Int64, "totalSpendCents": openapi.Int64,
		"spendByCurrency": map[string]any{"type": "object", "additionalProperties": openapi.Int64},
		"charges":         openapi.Int64, "authorizedCharges": openapi.Int64, "declinedCharges": openapi.Int64,
		"declineRate": openapi.Number, "meanRiskScore": openapi.Number,
	}),
}
