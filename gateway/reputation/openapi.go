package reputation

import (
	"net/http"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// openAPIDoc describes the reputation slice: reads other than /me are
// public; POST /events takes the service key (HeaderServiceKey) or an admin
// bearer token.
var openAPIDoc = openapi.Doc{
	Title:       "Reputation",
	Description: "Weighted events raise or lower a user's score; the score names the rank.",
	Prefixes:    []string{Prefix},
	Public:      func(method, path string) bool { return method == http.MethodGet && path != Prefix+"/me" },
	Bodies:      map[string]string{"POST " + Prefix + "/events": "EventRequest"},
	Responses:   responsesFor,
	Schemas:     componentSchemas,
	Operation: func(r server.Route, op map[string]any) {
		if r.Method == http.MethodPost && r.Path == Prefix+"/events" {
			params, _ := op["parameters"].([]any)
			op["parameters"] = append(params, map[string]any{"name": HeaderServiceKey, "in": "header", "required": false,
				"description": "the platform's reputation service key, instead of an admin bearer token", "schema": openapi.Str})
		}
	},
}

func responsesFor(method, path string) map[string]any {
	ok, errResp := openapi.Answer, openapi.ErrorAnswer
	out := map[string]any{}
	switch method + " " + path {
	case "GET " + Prefix + "/health":
		out["200"] = ok("liveness and the ranked-user count", "Health")
	case "GET " + Prefix + "/openapi.json":
		out["200"] = map[string]any{"description": "this document", "content": openapi.JSONContent(map[string]any{"type": "object"})}
	case "POST " + Prefix + "/events":
		out["201"] = ok("the event applied: the score and rank before and after", "EventResult")
		out["200"] = ok("replay of (userId, kind, sourceId): idempotent true", "EventResult")
		out["401"] = errResp("auth_required or key_invalid: neither a valid service key nor an admin token")
		out["403"] = errResp("forbidden: the token is not a reputation admin's")
		out["404"] = errResp("user_not_found: no user with this id")
		out["409"] = errResp("idempotency_key_reused")
	case "GET " + Prefix + "/me":
		out["200"] = ok("the caller's score, rank and last 50 events", "Me")
	case "GET " + Prefix + "/leaderboard":
		out["200"] = ok("top users by score, from the analytics copy", "Leaderboard")
	case "GET " + Prefix + "/rank/:userId":
		out["200"] = ok("the user's public score and rank", "Rank")
		out["404"] = errResp("user_not_found: no user with this id")
	case "GET " + Prefix + "/stats":
		out["200"] = ok("users per rank, mean and median score, events in 24h", "Stats")
	}
	return out
}

var (
	rank = map[string]any{"type": "string", "enum": schemas.Ranks()}
	// weightSchema is the signed change an event makes to a score.
	weightSchema = map[string]any{"type": "integer", "minimum": -1000, "maximum": 1000}
	event        = openapi.Obj([]string{"id", "kind", "sourceModule", "weight", "sourceId", "meta", "scoreAfter", "rankAfter", "createdAt"}, map[string]any{
		"id": openapi.KSUID, "kind": openapi.Str, "sourceModule": openapi.Str, "weight": weightSchema,
		"sourceId":   map[string]any{"type": "string", "nullable": true},
		"meta":       map[string]any{"type": "object", "nullable": true, "additionalProperties": true},
		"scoreAfter": openapi.Int64, "rankAfter": rank, "createdAt": openapi.DateTime,
	})
)

var componentSchemas = map[string]any{
	"EventRequest": openapi.Obj([]string{"userId", "kind", "sourceModule", "weight"}, map[string]any{
		"userId": openapi.KSUID, "kind": openapi.Text(64), "sourceModule": openapi.Text(64), "weight": weightSchema,
		"sourceId": openapi.Text(256), "meta": map[string]any{"type": "object", "additionalProperties": true, "description": "at most 16 KiB of JSON"},
	}),
	"EventResult": openapi.Obj([]string{"eventId", "userId", "weight", "previousScore", "newScore", "previousRank", "newRank", "promoted"}, map[string]any{
		"eventId": openapi.KSUID, "userId": openapi.KSUID, "weight": weightSchema, "previousScore": openapi.Int64, "newScore": openapi.Int64,
		"previousRank": rank, "newRank": rank, "promoted": openapi.Bool, "idempotent": openapi.Bool,
	}),
	"Me": openapi.Obj([]string{"userId", "score", "rank", "events"}, map[string]any{
		"userId": openapi.KSUID, "score": openapi.Int64, "rank": rank, "events": map[string]any{"type": "array", "items": event},
	}),
	"Leaderboard": openapi.Obj([]string{"items", "limit", "rank", "since", "source"}, map[string]any{
		"items": map[string]any{"type": "array", "items": openapi.Obj([]string{"position", "userId", "score", "rank"}, map[string]any{
			"position": openapi.Int64, "userId": openapi.KSUID, "score": openapi.Int64, "rank": rank,
			"gained": map[string]any{"type": "integer", "format": "int64", "description": "sum of weights since `since`, when given"},
		})},
		"limit": openapi.Int64, "rank": map[string]any{"type": "string", "nullable": true}, "since": map[string]any{"type": "string", "nullable": true},
		"source": openapi.Str,
	}),
	"Rank": openapi.Obj([]string{"userId", "score", "rank"}, map[string]any{"userId": openapi.KSUID, "score": openapi.Int64, "rank": rank}),
	"Stats": openapi.Obj([]string{"rankedUsers", "countPerRank", "meanScore", "medianScore", "eventsLast24h", "asOf", "source"}, map[string]any{
		"rankedUsers": openapi.Int64, "countPerRank": map[string]any{"type": "object", "additionalProperties": openapi.Int64},
		"meanScore": openapi.Number, "medianScore": openapi.Number, "eventsLast24h": openapi.Int64, "asOf": openapi.DateTime, "source": openapi.Str,
	}),
	"Health": openapi.Obj([]string{"status"}, map[string]any{"status": openapi.Str, "database": openapi.Str, "rankedUsers": openapi.Int64}),
}
