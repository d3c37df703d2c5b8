package partner

import (
	"net/http"
	"sort"
	"strings"

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

// receivers maps each partner webhook to its legacy secret header.
var receivers = map[string]string{
	PrefixRights + "/royalties/verify-webhook": HeaderRights,
	PrefixChess + "/tournament-finalized":      HeaderChess,
	PrefixChess + "/tournaments":               HeaderChess,
	PrefixCert + "/payouts/certify-webhook":    HeaderCert,
}

// public reports the routes that need no bearer token: health, the slices,
// the schedule, and the receivers (which are signed instead).
func public(method, path string) bool {
	if _, ok := receivers[path]; ok {
		return true
	}
	return method == http.MethodGet && (strings.HasSuffix(path, "/health") ||
		strings.HasSuffix(path, "/openapi.json") || path == PrefixChess+"/upcoming")
}

// OpenAPI builds the document of the routes under prefix.
func OpenAPI(routes []server.Route, prefix string) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title: titles[prefix],
		Description: "Partner webhooks are authenticated with X-Platform-Signature (hex HMAC-SHA256 over " +
			"timestamp + \".\" + the raw body, optional sha256= prefix) and X-Platform-Timestamp (unix seconds, 300 s " +
			"tolerance), or the legacy per-receiver secret header unless WEBHOOK_REQUIRE_HMAC=1. Amounts are integer " +
			"KZT minor units; nothing moves money.",
		Prefixes: []string{prefix},
		Public:   public,
		Schemas:  componentSchemas,
		Operation: func(r server.Route, op map[string]any) {
			key := r.Method + " " + r.Path
			op["responses"] = responsesFor(r.Method, r.Path)
			if body, ok := requestBodies[key]; ok {
				op["requestBody"] = map[string]any{"required": true, "content": jsonContent(ref(body))}
			} else {
				delete(op, "requestBody")
			}
			if legacy, ok := receivers[r.Path]; ok {
				op["parameters"] = []any{
					header(HeaderSignature, "hex HMAC-SHA256 of timestamp.body, optional sha256= prefix"),
					header(HeaderTimestamp, "unix seconds"),
					header(legacy, "legacy shared secret (disabled by WEBHOOK_REQUIRE_HMAC=1)"),
				}
			}
		},
	})
}

var (
	ref         = openapi.Ref
	jsonContent = openapi.JSONContent
)

func header(name, desc string) map[string]any {
	return map[string]any{"name": name, "in": "header", "required": false, "description": desc,
		"schema": map[string]any{"type": "string"}}
}

var requestBodies = map[string]string{
	"POST " + PrefixRights + "/royalties/verify-webhook": "RoyaltyWebhook",
	"POST " + PrefixChess + "/tournament-finalized":      "TournamentFinalized",
	"POST " + PrefixChess + "/tournaments":               "TournamentPublication",
	"POST " + PrefixCert + "/payouts/certify-webhook":    "CertWebhook",
}

func responsesFor(method, path string) map[string]any {
	errResp := openapi.ErrorAnswer
	ok := openapi.Answer
	out := map[string]any{}
	switch method + " " + path {
	case "POST " + PrefixRights + "/royalties/verify-webhook":
		out["201"] = ok("recorded", "RoyaltyReceipt")
		out["200"] = ok("replay of the eventId: replayed true, the first record", "RoyaltyReceipt")
	case "POST " + PrefixCert + "/payouts/certify-webhook":
		out["201"] = ok("recorded", "CertReceipt")
		out["200"] = ok("replay of the eventId: replayed true, the first record", "CertReceipt")
	case "POST " + PrefixChess + "/tournament-finalized":
		out["201"] = ok("at least one new podium entry recorded", "PodiumReceipt")
		out["200"] = ok("every entry was recorded before", "PodiumReceipt")
	case "POST " + PrefixChess + "/tournaments":
		out["201"] = ok("first publication", "TournamentReceipt")
		out["200"] = ok("republication: updated, or replayed true when unchanged", "TournamentReceipt")
	case "GET " + PrefixRights + "/royalties":
		out["200"] = ok("the caller's royalties, newest first", "RoyaltyList")
	case "GET " + PrefixChess + "/results":
		out["200"] = ok("the caller's podium entries, newest first", "PrizeList")
	case "GET " + PrefixCert + "/payouts":
		out["200"] = ok("the caller's certification payouts, newest first", "CertPayoutList")
	case "GET " + PrefixChess + "/upcoming":
		out["200"] = ok("tournaments accepting entries, soonest first", "Upcoming")
		out["400"] = errResp("invalid_cursor: the cursor is not one this API issued")
	case "GET " + PrefixCert + "/stats":
		out["200"] = ok("the caller's certification statistics", "PlanetStats")
	case "GET " + PrefixEcosystem + "/earnings":
		out["200"] = ok("the caller's earnings", "Earnings")
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if _, isReceiver := receivers[path]; isReceiver {
		out["401"] = errResp("signature_invalid: bad signature, or timestamp skew")
		out["400"] = errResp("invalid_json or content_type_required")
		out["422"] = errResp("validation_failed")
	} else if !public(method, path) {
		out["401"] = errResp("auth_required")
		out["403"] = errResp("email_unverified: records kept for an address are shown only to its verified owner")
	}
	return out
}

func obj(props map[string]any) map[string]any {
	required := make([]string, 0, len(props))
	for k := range props {
		required = append(required, k)
	}
	sort.Strings(required)
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func list(item string) map[string]any {
	return obj(map[string]any{
		"items":      map[string]any{"type": "array", "items": ref(item)},
		"total":      integer,
		"nextCursor": map[string]any{"type": "string", "nullable": true},
	})
}

var (
	str      = map[string]any{"type": "string"}
	integer  = map[string]any{"type": "integer", "format": "int64"}
	boolean  = map[string]any{"type": "boolean"}
	datetime = map[string]any{"type": "string", "format": "date-time"}
	emailStr = map[string]any{"type": "string", "format": "email"}

	royalty = map[string]any{"id": str, "productKey": str, "period": str, "amount": integer, "paidAt": datetime, "eventId": str}
	prize   = map[string]any{"id": str, "tournamentId": str, "place": integer, "amount": integer, "finalizedAt": datetime}
	payout  = map[string]any{"id": str, "artifactVersionId": str, "amount": integer, "certifiedAt": datetime, "eventId": str}
	tourney = map[string]any{"id": str, "startsAt": datetime, "format": str, "prizePool": integer, "entries": integer, "capacity": integer}
)

func with(base map[string]any, extra map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

var componentSchemas = map[string]any{
	"RoyaltyWebhook": obj(map[string]any{"eventId": str, "email": emailStr, "productKey": str, "period": str, "amount": integer}),
	"TournamentFinalized": obj(map[string]any{"tournamentId": str, "podium": map[string]any{"type": "array", "minItems": 1, "maxItems": maxPodium,
		"items": obj(map[string]any{"email": emailStr, "place": integer, "amount": integer})}}),
	"TournamentPublication": obj(tourney),
	"CertWebhook":           obj(map[string]any{"eventId": str, "email": emailStr, "artifactVersionId": str, "amount": integer}),
	"Royalty":               obj(royalty),
	"Prize":                 obj(prize),
	"CertPayout":            obj(payout),
	"Tournament":            obj(tourney),
	"RoyaltyReceipt":        obj(with(royalty, map[string]any{"replayed": boolean})),
	"CertReceipt":           obj(with(payout, map[string]any{"replayed": boolean})),
	"TournamentReceipt":     obj(with(tourney, map[string]any{"replayed": boolean})),
	"PodiumEntry":           obj(with(prize, map[string]any{"email": emailStr})),
	"PodiumReceipt": obj(map[string]any{"tournamentId": str, "finalizedAt": datetime,
		"recorded": map[string]any{"type": "array", "items": ref("PodiumEntry")},
		"replayed": map[string]any{"type": "array", "items": ref("PodiumEntry")}}),
	"RoyaltyList":    list("Royalty"),
	"PrizeList":      list("Prize"),
	"CertPayoutList": list("CertPayout"),
	"Upcoming":       obj(map[string]any{"items": map[string]any{"type": "array", "items": ref("Tournament")}}),
	"PlanetStats":    obj(map[string]any{"totalArtifacts": integer, "verifiedCount": integer, "trustWeight": map[string]any{"type": "number"}}),
	"Earnings": obj(map[string]any{
		"totals": obj(map[string]any{"rights": integer, "chess": integer, "planet": integer, "all": integer}),
		"perSource": map[string]any{"type": "array", "items": obj(map[string]any{
			"source": map[string]any{"type": "string", "enum": []string{"qright", "cyberchess", "planet"}},
			"amount": integer, "count": integer,
			"last": map[string]any{"type": "string", "format": "date-time", "nullable": true},
		})},
	}),
}
