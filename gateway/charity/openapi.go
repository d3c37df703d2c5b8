package charity

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.d.Routes()))
}

// publicRoute reports the routes that need no bearer token.
func publicRoute(method, _ string) bool {
	return method == http.MethodGet
}

// OpenAPI builds the charity slice of the routes.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Charity campaigns",
		Description: "Campaigns proposed by users and approved by charity admins; donations from KZT wallets settle through the wallet pipeline.",
		Prefixes:    []string{Prefix},
		Public:      publicRoute,
		Schemas:     componentSchemas,
		Operation: func(r server.Route, op map[string]any) {
			op["responses"] = responsesFor(r.Method, r.Path)
			if body, ok := requestBodies[r.Method+" "+r.Path]; ok {
				op["requestBody"] = map[string]any{"required": body.required, "content": openapi.JSONContent(openapi.Ref(body.schema))}
			} else {
				delete(op, "requestBody")
			}
		},
	})
}

var requestBodies = map[string]struct {
	schema   string
	required bool
}{
	"POST " + Prefix + "/campaigns":               {"CreateCampaignRequest", true},
	"POST " + Prefix + "/campaigns/:id/approve":   {"ApproveRequest", false},
	"POST " + Prefix + "/campaigns/:id/donations": {"DonationRequest", true},
}

func responsesFor(method, path string) map[string]any {
	errResp := openapi.ErrorAnswer
	ok := openapi.Answer
	out := map[string]any{}
	switch method + " " + path {
	case "GET " + Prefix + "/campaigns":
		out["200"] = ok("approved campaigns, pinned first", "CampaignList")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/campaigns/:id":
		out["200"] = ok("the campaign", "Campaign")
		out["404"] = errResp("not_found: unknown, or pending and not yours")
	case "POST " + Prefix + "/campaigns":
		out["201"] = ok("the pending campaign", "Campaign")
		out["422"] = errResp("validation_failed")
	case "POST " + Prefix + "/campaigns/:id/approve":
		out["200"] = ok("the active campaign", "Campaign")
		out["403"] = errResp("forbidden: not a charity admin")
		out["404"] = errResp("not_found")
		out["409"] = errResp("invalid_state: not pending")
	case "POST " + Prefix + "/campaigns/:id/donations":
		out["201"] = ok("the settled donation", "Donation")
		out["400"] = errResp("insufficient_balance, wallet_inactive")
		out["404"] = errResp("not_found (campaign), wallet_not_found")
		out["409"] = errResp("campaign_not_active, idempotency_key_reused")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/stats":
		out["200"] = ok("aggregates", "Stats")
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if method != http.MethodGet {
		out["401"] = errResp("auth_required")
	}
	out["429"] = errResp("rate_limited: retry after the Retry-After seconds")
	return out
}

var (
	nullTime = map[string]any{"type": "string", "format": "date-time", "nullable": true}
	urls     = map[string]any{"type": "array", "maxItems": maxMedia, "items": map[string]any{"type": "string", "format": "uri"}}
)

var componentSchemas = map[string]any{
	"CreateCampaignRequest": openapi.Obj([]string{"title", "description", "category", "goalKzt"}, map[string]any{
		"title": openapi.Str, "description": openapi.Str, "category": openapi.Str, "goalKzt": openapi.Amount, "media": urls, "endsAt": openapi.DateTime,
	}),
	"ApproveRequest": openapi.Obj(nil, map[string]any{"pin": openapi.Bool, "feature": openapi.Bool}),
	"DonationRequest": openapi.Obj([]string{"walletId", "amountKzt"}, map[string]any{
		"walletId": openapi.KSUID, "amountKzt": openapi.Amount, "anonymous": openapi.Bool, "message": openapi.Str,
	}),
	"Campaign": openapi.Obj([]string{"id", "title", "description", "category", "goalKzt", "media", "status", "pinned", "featured",
		"createdAt", "progress"}, map[string]any{
		"id": openapi.KSUID, "title": openapi.Str, "description": openapi.Str, "category": openapi.Str, "goalKzt": openapi.Int64, "media": urls,
		"endsAt": nullTime, "status": map[string]any{"type": "string", "enum": []string{"pending", "active", "ended"}},
		"pinned": openapi.Bool, "featured": openapi.Bool, "createdAt": openapi.DateTime, "approvedAt": nullTime, "goalReachedAt": nullTime,
		"progress": openapi.Obj([]string{"raisedKzt", "goalKzt", "percent", "donorCount"}, map[string]any{
			"raisedKzt": openapi.Int64, "goalKzt": openapi.Int64, "percent": openapi.Int64, "donorCount": openapi.Int64,
		}),
		"recentDonors": map[string]any{"type": "array", "items": openapi.Obj([]string{"name", "amountKzt", "donatedAt"},
			map[string]any{"name": openapi.Str, "amountKzt": openapi.Int64, "donatedAt": openapi.DateTime})},
	}),
	"CampaignList": openapi.Obj([]string{"items", "total", "nextCursor"}, map[string]any{
		"items": map[string]any{"type": "array", "items": openapi.Ref("Campaign")}, "total": openapi.Int64,
		"nextCursor": map[string]any{"type": "string", "nullable": true},
	}),
	"Donation": openapi.Obj([]string{"donationId", "ledgerEntryId", "transactionId", "campaignTotalKzt", "thankYouUrl"},
		map[string]any{
			"donationId": openapi.KSUID, "ledgerEntryId": openapi.Str, "transactionId": openapi.Str, "campaignId": openapi.KSUID, "walletId": openapi.KSUID,
			"amountKzt": openapi.Int64, "anonymous": openapi.Bool, "campaignTotalKzt": openapi.Int64,
			"thankYouUrl": map[string]any{"type": "string", "format": "uri"}, "createdAt": openapi.DateTime,
		}),
	"Stats": openapi.Obj([]string{"totalRaisedKzt", "donorCount", "topCategories"}, map[string]any{
		"totalRaisedKzt": openapi.Int64, "donorCount": openapi.Int64,
		"topCategories": map[string]any{"type": "array", "items": openapi.Obj([]string{"category", "raisedKzt"},
			map[string]any{"category": openapi.Str, "raisedKzt": openapi.Int64})},
	}),
}
