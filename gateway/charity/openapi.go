package charity

import (
	"net/http"
	"sort"

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
				op["requestBody"] = map[string]any{"required": body.required, "content": jsonContent(ref(body.schema))}
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

var requestBodies = map[string]struct {
	schema   string
	required bool
}{
	"POST " + Prefix + "/campaigns":               {"CreateCampaignRequest", true},
	"POST " + Prefix + "/campaigns/:id/approve":   {"ApproveRequest", false},
	"POST " + Prefix + "/campaigns/:id/donations": {"DonationRequest", true},
}

func responsesFor(method, path string) map[string]any {
	errResp := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(ref("Error"))}
	}
	ok := func(desc, schema string) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(ref(schema))}
	}
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
	boolean  = map[string]any{"type": "boolean"}
	datetime = map[string]any{"type": "string", "format": "date-time"}
	nullTime = map[string]any{"type": "string", "format": "date-time", "nullable": true}
	urls     = map[string]any{"type": "array", "maxItems": maxMedia, "items": map[string]any{"type": "string", "format": "uri"}}
)

var componentSchemas = map[string]any{
	"CreateCampaignRequest": obj([]string{"title", "description", "category", "goalKzt"}, map[string]any{
		"title": str, "description": str, "category": str, "goalKzt": integer, "media": urls, "endsAt": datetime,
	}),
	"ApproveRequest": obj(nil, map[string]any{"pin": boolean, "feature": boolean}),
	"DonationRequest": obj([]string{"walletId", "amountKzt"}, map[string]any{
		"walletId": str, "amountKzt": integer, "anonymous": boolean, "message": str,
	}),
	"Campaign": obj([]string{"id", "title", "description", "category", "goalKzt", "media", "status", "pinned", "featured",
		"createdAt", "progress"}, map[string]any{
		"id": str, "title": str, "description": str, "category": str, "goalKzt": integer, "media": urls,
		"endsAt": nullTime, "status": map[string]any{"type": "string", "enum": []string{"pending", "active", "ended"}},
		"pinned": boolean, "featured": boolean, "createdAt": datetime, "approvedAt": nullTime, "goalReachedAt": nullTime,
		"progress": obj([]string{"raisedKzt", "goalKzt", "percent", "donorCount"}, map[string]any{
			"raisedKzt": integer, "goalKzt": integer, "percent": integer, "donorCount": integer,
		}),
		"recentDonors": map[string]any{"type": "array", "items": obj([]string{"name", "amountKzt", "donatedAt"},
			map[string]any{"name": str, "amountKzt": integer, "donatedAt": datetime})},
	}),
	"CampaignList": obj([]string{"items", "total", "nextCursor"}, map[string]any{
		"items": map[string]any{"type": "array", "items": ref("Campaign")}, "total": integer,
		"nextCursor": map[string]any{"type": "string", "nullable": true},
	}),
	"Donation": obj([]string{"donationId", "ledgerEntryId", "transactionId", "campaignTotalKzt", "thankYouUrl"},
		map[string]any{
			"donationId": str, "ledgerEntryId": str, "transactionId": str, "campaignId": str, "walletId": str,
			"amountKzt": integer, "anonymous": boolean, "campaignTotalKzt": integer,
			"thankYouUrl": map[string]any{"type": "string", "format": "uri"}, "createdAt": datetime,
		}),
	"Stats": obj([]string{"totalRaisedKzt", "donorCount", "topCategories"}, map[string]any{
		"totalRaisedKzt": integer, "donorCount": integer,
		"topCategories": map[string]any{"type": "array", "items": obj([]string{"category", "raisedKzt"},
			map[string]any{"category": str, "raisedKzt": integer})},
	}),
}
