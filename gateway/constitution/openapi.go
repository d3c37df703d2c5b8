package constitution

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// openapi serves the OpenAPI 3.0 slice of the routes registered under
// prefix (one of the two modules, at /api or under the proxy base).
func (h *Handlers) openapi(prefix string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return c.JSON(OpenAPI(h.d.Routes(), prefix))
	}
}

// isPublic reports the routes that need no bearer token: health, the
// slices, the public reference data and the planet reads.
func isPublic(method, path string) bool {
	if method != http.MethodGet {
		return false
	}
	return strings.HasSuffix(path, "/health") || strings.HasSuffix(path, "/openapi.json") ||
		strings.Contains(path, "/public/") || strings.Contains(path, PlanetPrefix+"/")
}

// OpenAPI builds the document of the routes under prefix.
func OpenAPI(routes []server.Route, prefix string) map[string]any {
	title, desc := "Constitution scenarios", "Scenario builder with eight sliders, computed regimes and metrics, an AI advisor and PDF reports."
	if strings.HasSuffix(prefix, PlanetPrefix) {
		title, desc = "Planet catalog of constitution artifacts", "Published scenarios with similarity search, votes and comments. Reads need no token."
	}
	return openapi.Build(routes, openapi.Doc{
		Title:       title,
		Description: desc,
		Prefixes:    []string{prefix},
		Public:      isPublic,
		Schemas:     componentSchemas,
		Operation: func(r server.Route, op map[string]any) {
			rel := strings.TrimPrefix(r.Path, prefix)
			op["responses"] = responsesFor(r.Method, rel, isPublic(r.Method, r.Path))
			if body, ok := requestBodies[r.Method+" "+rel]; ok {
				op["requestBody"] = map[string]any{"required": true, "content": openapi.JSONContent(openapi.Ref(body))}
			} else {
				delete(op, "requestBody")
			}
			if r.Method == http.MethodGet && (rel == "/scenarios" || rel == "/constitution-artifacts") {
				params, _ := op["parameters"].([]any)
				params = append(params,
					map[string]any{"name": "limit", "in": "query", "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 200, "default": 50}},
					map[string]any{"name": "cursor", "in": "query", "schema": openapi.Str})
				if rel == "/constitution-artifacts" {
					params = append(params, map[string]any{"name": "regime", "in": "query", "schema": map[string]any{"type": "string", "enum": RegimeKeys()}})
				}
				op["parameters"] = params
			}
		},
	})
}

var requestBodies = map[string]string{
	"POST /scenarios":                          "ScenarioRequest",
	"POST /ai-suggest":                         "AISuggestRequest",
	"POST /ai-suggest-stream":                  "AISuggestRequest",
	"POST /pdf":                                "ScenarioRef",
	"POST /constitution-artifacts":             "ScenarioRef",
	"POST /constitution-artifacts/:id/comment": "CommentRequest",
}

func responsesFor(method, rel string, public bool) map[string]any {
	ok := openapi.Answer
	errResp := openapi.ErrorAnswer
	out := map[string]any{}
	switch method + " " + rel {
	case "GET /public/regimes", "GET /public/presets", "GET /public/countries", "GET /public/sliders-spec":
		out["200"] = map[string]any{"description": "reference data; Cache-Control public, max-age=3600 and an ETag",
			"content": openapi.JSONContent(map[string]any{"type": "object"})}
		out["304"] = map[string]any{"description": "not modified (If-None-Match matched the ETag)"}
	case "POST /scenarios":
		out["201"] = ok("the saved scenario with the computed regime and metrics", "Scenario")
		out["422"] = errResp("validation_failed")
	case "GET /scenarios":
		out["200"] = ok("the caller's scenarios, newest first", "ScenarioList")
	case "POST /ai-suggest":
		out["200"] = ok("suggestions and the predicted result", "AISuggestResponse")
	case "POST /ai-suggest-stream":
		out["200"] = map[string]any{"description": "server-sent events: `progress` events, then one `result` event whose data is the AISuggestResponse",
			"content": map[string]any{"text/event-stream": map[string]any{"schema": openapi.Str}}}
	case "POST /pdf":
		out["200"] = map[string]any{"description": "the report", "content": map[string]any{"application/pdf": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}}
		out["404"] = errResp("not_found: no such scenario of the caller")
		out["422"] = errResp("validation_failed")
	case "GET /me/plan":
		out["200"] = ok("plan and usage", "Plan")
	case "POST /constitution-artifacts":
		out["201"] = ok("the published artifact", "Artifact")
		out["404"] = errResp("not_found: no such scenario of the caller")
		out["422"] = errResp("validation_failed")
	case "GET /constitution-artifacts":
		out["200"] = ok("artifacts, newest first", "ArtifactList")
	case "GET /constitution-artifacts/stats":
		out["200"] = ok("catalog statistics", "Stats")
	case "GET /constitution-artifacts/:id":
		out["200"] = ok("the artifact", "Artifact")
		out["404"] = errResp("not_found")
	case "GET /constitution-artifacts/:id/similar":
		out["200"] = ok("at most 5 nearest artifacts, nearest first, ties by id", "SimilarList")
		out["404"] = errResp("not_found")
	case "POST /constitution-artifacts/:id/vote":
		out["201"] = ok("vote recorded", "Vote")
		out["200"] = ok("the caller had voted already", "Vote")
		out["404"] = errResp("not_found")
	case "DELETE /constitution-artifacts/:id/vote":
		out["200"] = ok("vote removed (or there was none)", "Vote")
		out["404"] = errResp("not_found")
	case "POST /constitution-artifacts/:id/comment":
		out["201"] = ok("the comment", "Comment")
		out["404"] = errResp("not_found")
		out["422"] = errResp("validation_failed")
	case "GET /constitution-artifacts/:id/social":
		out["200"] = ok("votes, whether the caller voted, comments oldest first", "Social")
		out["404"] = errResp("not_found")
	default:
		out["200"] = map[string]any{"description": "OK", "content": openapi.JSONContent(map[string]any{"type": "object"})}
	}
	switch rel {
	case "/ai-suggest", "/ai-suggest-stream":
		out["401"] = errResp("audit_required")
		out["402"] = errResp("spend_limit_exceeded: monthly AI request limit reached")
		out["404"] = errResp("template_not_found")
		out["422"] = errResp("validation_failed")
	default:
		if !public {
			out["401"] = errResp("auth_required")
		}
	}
	return out
}

func intObj(keys []string) map[string]any {
	props := map[string]any{}
	for _, k := range keys {
		props[k] = map[string]any{"type": "integer", "minimum": 0, "maximum": 100}
	}
	return openapi.Obj(append([]string(nil), keys...), props)
}

var (
	strList  = map[string]any{"type": "array", "items": openapi.Str}
	nullStr  = map[string]any{"type": "string", "nullable": true}
	sliders  = intObj(schemas.SliderKeys)
	metrics  = intObj(schemas.MetricKeys)
	outcome  = openapi.Obj([]string{"regime", "metrics"}, map[string]any{"regime": openapi.Str, "metrics": metrics})
	artifact = openapi.Obj([]string{"id", "title", "sliders", "regime", "metrics"}, map[string]any{
		"id": openapi.Str, "userId": openapi.Str, "scenarioId": nullStr, "title": openapi.Str, "sliders": sliders, "regime": openapi.Str, "metrics": metrics,
		"tags": strList, "votes": openapi.Int64, "commentCount": openapi.Int64, "createdAt": openapi.DateTime,
	})
	comment = openapi.Obj([]string{"id", "userId", "text", "createdAt"}, map[string]any{"id": openapi.Str, "userId": openapi.Str, "text": openapi.Str, "createdAt": openapi.DateTime})
)

func list(item map[string]any) map[string]any {
	return openapi.Obj([]string{"items", "nextCursor"}, map[string]any{"items": map[string]any{"type": "array", "items": item}, "nextCursor": nullStr})
}

var componentSchemas = map[string]any{
	"Sliders": sliders,
	"Metrics": metrics,
	"ScenarioRequest": openapi.Obj([]string{"title", "sliders"}, map[string]any{
		"title": openapi.Str, "sliders": sliders, "tags": strList,
		"regime":  map[string]any{"type": "string", "description": "ignored: computed by the server"},
		"metrics": map[string]any{"type": "object", "description": "ignored: computed by the server"},
	}),
	"Scenario": openapi.Obj([]string{"id", "title", "sliders", "regime", "metrics", "tags", "createdAt"}, map[string]any{
		"id": openapi.Str, "title": openapi.Str, "sliders": sliders, "regime": openapi.Str, "metrics": metrics, "tags": strList, "createdAt": openapi.DateTime,
	}),
	"ScenarioList": list(map[string]any{"$ref": "#/components/schemas/Scenario"}),
	"ScenarioRef": openapi.Obj(nil, map[string]any{
		"scenarioId": map[string]any{"type": "string", "description": "a saved scenario of the caller; otherwise title and sliders are required"},
		"title":      openapi.Str, "sliders": sliders, "tags": strList,
	}),
	"AISuggestRequest": openapi.Obj([]string{"sliders"}, map[string]any{
		"sliders":    sliders,
		"goal":       map[string]any{"type": "string", "enum": schemas.MetricKeys},
		"templateId": map[string]any{"type": "string", "description": "a template id from GET /public/presets (aiTemplates)"},
	}),
	"AISuggestResponse": openapi.Obj([]string{"suggestions", "predicted", "source"}, map[string]any{
		"suggestions": map[string]any{"type": "array", "items": openapi.Obj([]string{"slider", "delta", "reason"}, map[string]any{
			"slider": map[string]any{"type": "string", "enum": schemas.SliderKeys}, "delta": map[string]any{"type": "integer"}, "reason": openapi.Str,
		})},
		"predicted": outcome, "current": outcome, "goal": nullStr, "templateId": nullStr,
		"source":          map[string]any{"type": "string", "enum": []string{SourceBuiltin, SourceModel, SourceFallback}},
		"fallbackReason":  map[string]any{"type": "string", "enum": []string{"model_timeout", "model_error", "model_invalid_response"}},
		"aiRequestsUsed":  openapi.Int64,
		"aiRequestsLimit": openapi.Int64,
	}),
	"Plan": openapi.Obj([]string{"plan", "aiRequestsUsed", "aiRequestsLimit", "periodEnd"}, map[string]any{
		"plan": openapi.Str, "aiRequestsUsed": openapi.Int64, "aiRequestsLimit": openapi.Int64, "periodStart": openapi.DateTime, "periodEnd": openapi.DateTime,
		"advisor": map[string]any{"type": "string", "enum": []string{SourceBuiltin, SourceModel}},
	}),
	"Artifact":     artifact,
	"ArtifactList": list(map[string]any{"$ref": "#/components/schemas/Artifact"}),
	"SimilarList": openapi.Obj([]string{"items"}, map[string]any{"items": map[string]any{"type": "array", "items": map[string]any{
		"allOf": []any{map[string]any{"$ref": "#/components/schemas/Artifact"}, openapi.Obj([]string{"distance"}, map[string]any{"distance": map[string]any{"type": "number"}})},
	}}}),
	"Stats": openapi.Obj([]string{"totalArtifacts", "byRegime"}, map[string]any{
		"totalArtifacts": openapi.Int64,
		"byRegime":       map[string]any{"type": "array", "items": openapi.Obj([]string{"regime", "count"}, map[string]any{"regime": openapi.Str, "count": openapi.Int64})},
	}),
	"Vote":           openapi.Obj([]string{"artifactId", "votes", "voted"}, map[string]any{"artifactId": openapi.Str, "votes": openapi.Int64, "voted": map[string]any{"type": "boolean"}}),
	"CommentRequest": openapi.Obj([]string{"text"}, map[string]any{"text": map[string]any{"type": "string", "minLength": 1, "maxLength": maxCommentLen}}),
	"Comment":        comment,
	"Social": openapi.Obj([]string{"votes", "voted", "comments"}, map[string]any{
		"votes": openapi.Int64, "voted": map[string]any{"type": "boolean"}, "comments": map[string]any{"type": "array", "items": comment},
	}),
}
