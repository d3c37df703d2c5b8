package gov

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server actually registered under Prefix.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.d.Routes()))
}

// OpenAPI builds the OpenAPI 3.0 document of the governance routes among
// routes, with the module's request and response schemas.
func OpenAPI(routes []server.Route) map[string]any {
	return openapi.Build(routes, openapi.Doc{
		Title:       "Governance",
		Description: "Proposals, ballots in three vote modes (yes-no-abstain, ranked-choice, weighted) and their exact tallies.",
		Prefixes:    []string{Prefix},
		Public:      func(method, path string) bool { return publicPaths[method+" "+path] },
		Schemas:     componentSchemas,
		Operation: func(r server.Route, op map[string]any) {
			op["responses"] = responsesFor(r.Method, r.Path)
			if r.Method+" "+r.Path == "POST "+Prefix+"/proposals" {
				params, _ := op["parameters"].([]any)
				op["parameters"] = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "required": false,
					"description": "makes retries safe: the same key and body answer the original proposal",
					"schema":      map[string]any{"type": "string", "maxLength": 255}})
			}
			if body, ok := requestBodies[r.Method+" "+r.Path]; ok {
				op["requestBody"] = map[string]any{"required": true, "content": openapi.JSONContent(openapi.Ref(body))}
			} else {
				delete(op, "requestBody")
			}
		},
	})
}

var requestBodies = map[string]string{
	"POST " + Prefix + "/proposals":           "CreateProposalRequest",
	"POST " + Prefix + "/proposals/:id/votes": "VoteRequest",
}

// responsesFor documents the answers of one operation.
func responsesFor(method, path string) map[string]any {
	errResp := openapi.ErrorAnswer
	ok := openapi.Answer
	out := map[string]any{}
	id := Prefix + "/proposals/:id"
	switch method + " " + path {
	case "GET " + Prefix + "/health":
		out["200"] = ok("liveness and the open-proposal count", "Health")
		out["503"] = openapi.Degraded()
	case "GET " + Prefix + "/openapi.json":
		out["200"] = map[string]any{"description": "this document", "content": openapi.JSONContent(map[string]any{"type": "object"})}
	case "GET " + Prefix + "/stats":
		out["200"] = ok("roll-up from the analytics copy", "Stats")
	case "POST " + Prefix + "/proposals":
		out["201"] = ok("the draft (or, replayed, the original one)", "Proposal")
		out["409"] = errResp("idempotency_key_reused")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/proposals":
		out["200"] = map[string]any{"description": "proposals, newest first", "content": openapi.JSONContent(openapi.ListOf("Proposal"))}
		out["422"] = errResp("validation_failed: unknown status or bad cursor")
	case "GET " + id:
		out["200"] = ok("the proposal with its current tally", "Proposal")
		out["404"] = errResp("not_found")
	case "POST " + id + "/votes":
		out["201"] = ok("the ballot and the tally after it", "VoteResult")
		out["404"] = errResp("not_found")
		out["409"] = errResp("voting_closed or already_voted")
		out["422"] = errResp("validation_failed: the ballot does not match the vote mode")
	case "GET " + id + "/votes":
		out["200"] = map[string]any{"description": "ballots in the order cast", "content": openapi.JSONContent(openapi.ListOf("Ballot"))}
		out["404"] = errResp("not_found")
		out["409"] = errResp("proposal_not_closed")
	case "POST " + id + "/open", "POST " + id + "/close":
		out["200"] = ok("the proposal after the transition, with its tally", "Proposal")
		out["403"] = errResp("forbidden: not a governance admin")
		out["404"] = errResp("not_found")
		out["409"] = errResp("invalid_state")
	case "POST " + id + "/execute":
		out["200"] = ok("the executed proposal, idempotent: true", "Proposal")
		out["403"] = errResp("forbidden: not a governance admin")
		out["404"] = errResp("not_found")
		out["409"] = errResp("invalid_state: the proposal did not pass")
	case "POST " + id + "/tally":
		out["200"] = ok("the recount", "TallyResult")
		out["404"] = errResp("not_found")
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	if !publicPaths[method+" "+path] {
		out["401"] = errResp("auth_required")
	}
	out["429"] = errResp("rate_limited: retry after the Retry-After seconds")
	if method == http.MethodPost {
		out["400"] = errResp("invalid_json or content_type_required")
	}
	return out
}

var (
	strs     = map[string]any{"type": "array", "items": openapi.Str}
	nullTime = map[string]any{"type": "string", "format": "date-time", "nullable": true}
	modes    = map[string]any{"type": "string", "enum": []string{"yes-no-abstain", "ranked-choice", "weighted"}}
	statuses = map[string]any{"type": "string", "enum": []string{"draft", "open", "executed", "rejected"}}
	tallyNow = map[string]any{"type": "object", "description": "a value per choice (ranked-choice: the final round, plus rounds)",
		"additionalProperties": true}
	tally = openapi.Obj([]string{"ballots", "tallyNow", "quorum", "threshold", "quorumMet", "passing"}, map[string]any{
		"ballots": openapi.Int64, "tallyNow": tallyNow, "quorum": openapi.Int64, "threshold": openapi.Number,
		"leader": map[string]any{"type": "string", "nullable": true}, "share": map[string]any{"type": "number", "nullable": true},
		"quorumMet": openapi.Bool, "passing": openapi.Bool,
	})
)

var componentSchemas = map[string]any{
	"CreateProposalRequest": openapi.Obj([]string{"title", "category", "voteMode"}, map[string]any{
		"title": openapi.Str, "summary": openapi.Str, "body": openapi.Str, "category": openapi.Str, "voteMode": modes,
		"quorum":                map[string]any{"type": "integer", "minimum": 1, "default": 1},
		"threshold":             map[string]any{"type": "number", "exclusiveMinimum": true, "minimum": 0, "exclusiveMaximum": true, "maximum": 1, "default": 0.5},
		"options":               map[string]any{"type": "array", "items": openapi.Str, "minItems": 2, "maxItems": 20, "uniqueItems": true},
		"votingDurationSeconds": map[string]any{"type": "integer", "minimum": 1, "maximum": 31536000, "default": 604800},
	}),
	"Proposal": openapi.Obj([]string{"id", "title", "category", "voteMode", "options", "quorum", "threshold", "status", "authorUserId", "createdAt"},
		map[string]any{
			"id": openapi.KSUID, "title": openapi.Str, "summary": openapi.Str, "body": openapi.Str, "category": openapi.Str, "voteMode": modes, "options": strs,
			"quorum": openapi.Int64, "threshold": openapi.Number, "votingDurationSeconds": openapi.Int64, "status": statuses,
			"authorUserId": openapi.KSUID, "votesOpenAt": nullTime, "votesCloseAt": nullTime, "closedAt": nullTime,
			"createdAt": openapi.DateTime, "tally": tally, "idempotent": openapi.Bool,
		}),
	"VoteRequest": openapi.Obj(nil, map[string]any{
		"choice":  map[string]any{"type": "string", "enum": []string{"yes", "no", "abstain"}},
		"reason":  openapi.Str,
		"ranking": map[string]any{"type": "array", "items": openapi.Str, "description": "ranked-choice: every option exactly once"},
		"weights": map[string]any{"type": "object", "additionalProperties": openapi.Number, "description": "weighted: positive weights of a non-empty subset of the options"},
	}),
	"VoteResult": openapi.Obj([]string{"voteId", "proposalId", "tallyNow", "ballots", "quorumMet", "passing"}, map[string]any{
		"voteId": openapi.KSUID, "proposalId": openapi.KSUID, "tallyNow": tallyNow, "ballots": openapi.Int64, "quorumMet": openapi.Bool, "passing": openapi.Bool,
	}),
	"Ballot": openapi.Obj([]string{"voteId", "userId", "createdAt"}, map[string]any{
		"voteId": openapi.KSUID, "userId": openapi.KSUID, "choice": openapi.Str, "ranking": strs,
		"weights": map[string]any{"type": "object", "additionalProperties": openapi.Number}, "createdAt": openapi.DateTime,
	}),
	"TallyResult": openapi.Obj([]string{"proposalId", "status", "voteMode", "ballots", "tallyNow", "quorumMet", "passing"}, map[string]any{
		"proposalId": openapi.KSUID, "status": statuses, "voteMode": modes, "ballots": openapi.Int64, "tallyNow": tallyNow,
		"leader": map[string]any{"type": "string", "nullable": true}, "share": map[string]any{"type": "number", "nullable": true},
		"quorum": openapi.Int64, "threshold": openapi.Number, "quorumMet": openapi.Bool, "passing": openapi.Bool,
	}),
	"Stats": openapi.Obj([]string{"byStatus", "meanTurnout", "topCategories"}, map[string]any{
		"byStatus": openapi.Obj([]string{"draft", "open", "executed", "rejected"}, map[string]any{
			"draft": openapi.Int64, "open": openapi.Int64, "executed": openapi.Int64, "rejected": openapi.Int64}),
		"meanTurnout": openapi.Number, "asOf": openapi.DateTime, "source": openapi.Str,
		"topCategories": map[string]any{"type": "array", "items": openapi.Obj([]string{"category", "count"}, map[string]any{
			"category": openapi.Str, "count": openapi.Int64})},
	}),
	"Health": openapi.Obj([]string{"status", "openProposals"}, map[string]any{"status": openapi.Str, "database": openapi.Str, "openProposals": openapi.Int64}),
}
