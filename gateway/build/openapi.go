package build

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/server"
)

// openapi answers the module's OpenAPI 3.0 slice, generated from the routes
// the server registered under the module's prefixes.
func (h *Handlers) openapi(c *fiber.Ctx) error {
	return c.JSON(OpenAPI(h.routes()))
}

// employerRoute reports whether a route is on the JWT employer side.
func employerRoute(path string) bool {
	return strings.HasPrefix(path, Prefix+"/") && !strings.HasPrefix(path, PublicPrefix+"/") &&
		path != Prefix+"/health" && path != Prefix+"/openapi.json"
}

// OpenAPI builds the build module's document: the employer side (bearer),
// the partner API (X-Build-Key), and the public feeds and pages.
func OpenAPI(routes []server.Route) map[string]any {
	doc := openapi.Build(routes, openapi.Doc{
		Title:       "Partner vacancy feeds",
		Description: "Employers post vacancies; partners read open ones with an X-Build-Key, embed the widget, or follow the RSS feed and sitemap.",
		Prefixes:    []string{Prefix, PagePrefix, SitemapPath},
		Public:      func(_, path string) bool { return !employerRoute(path) },
		Schemas:     componentSchemas,
		Operation: func(r server.Route, op map[string]any) {
			key := r.Method + " " + r.Path
			if strings.HasPrefix(r.Path, APIPrefix+"/") {
				op["security"] = []any{map[string]any{"buildKey": []string{}}}
			}
			op["responses"] = responsesFor(r)
			if body, ok := requestBodies[key]; ok {
				op["requestBody"] = map[string]any{"required": true, "content": openapi.JSONContent(openapi.Ref(body))}
			} else {
				delete(op, "requestBody")
			}
			if params, ok := queryParams[key]; ok {
				existing, _ := op["parameters"].([]any)
				op["parameters"] = append(existing, params...)
			}
		},
	})
	comps := doc["components"].(map[string]any)
	comps["securitySchemes"].(map[string]any)["buildKey"] = map[string]any{"type": "apiKey", "in": "header", "name": HeaderKey}
	return doc
}

var requestBodies = map[string]string{
	"POST " + Prefix + "/projects":  "CreateProjectRequest",
	"POST " + Prefix + "/vacancies": "CreateVacancyRequest",
}

func query(name, desc string, schema map[string]any) any {
	return map[string]any{"name": name, "in": "query", "required": false, "description": desc, "schema": schema}
}

var (
	limitParam  = query("limit", "page size, default 50, larger values are clamped to 200", map[string]any{"type": "integer", "minimum": 1})
	offsetParam = query("offset", "items to skip", map[string]any{"type": "integer", "minimum": 0, "maximum": maxOffset})
	cityParam   = query("city", "exact city, case-insensitive", openapi.Str)
	skillParam  = query("skill", "one of the vacancy's skills, case-insensitive", openapi.Str)
)

var queryParams = map[string][]any{
	"GET " + APIPrefix + "/vacancies":            {limitParam, offsetParam, cityParam, skillParam},
	"GET " + Prefix + "/vacancies":               {limitParam, offsetParam},
	"GET " + PublicPrefix + "/rss/vacancies.xml": {cityParam, skillParam},
	"GET " + SitemapPath:                         {query("page", "page of a sitemap index", map[string]any{"type": "integer", "minimum": 1})},
	"GET " + Prefix + "/projects":                {limitParam, offsetParam},
}

func responsesFor(r server.Route) map[string]any {
	errResp := openapi.ErrorAnswer
	ok := func(desc string, schema map[string]any) map[string]any {
		return map[string]any{"description": desc, "content": openapi.JSONContent(schema)}
	}
	typed := func(desc, mime string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{mime: map[string]any{"schema": openapi.Str}}}
	}
	out := map[string]any{}
	switch r.Method + " " + r.Path {
	case "POST " + Prefix + "/projects":
		out["201"] = ok("the project", openapi.Ref("Project"))
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/projects":
		out["200"] = ok("the caller's projects", openapi.Obj([]string{"items", "limit", "offset"}, map[string]any{
			"items": map[string]any{"type": "array", "items": openapi.Ref("Project")}, "limit": openapi.Int64, "offset": openapi.Int64}))
	case "POST " + Prefix + "/vacancies":
		out["201"] = ok("the OPEN vacancy", openapi.Ref("Vacancy"))
		out["403"] = errResp("plan_vacancy_limit_reached")
		out["404"] = errResp("not_found: no such project of the caller")
		out["422"] = errResp("validation_failed")
	case "GET " + Prefix + "/vacancies":
		out["200"] = ok("the caller's vacancies", pageOf())
	case "POST " + Prefix + "/vacancies/:id/close":
		out["200"] = ok("the closed vacancy", openapi.Ref("Vacancy"))
		out["404"] = errResp("not_found: no such vacancy of the caller")
	case "POST " + Prefix + "/partner-keys":
		out["201"] = ok("the key; its plaintext is shown only here", openapi.Ref("PartnerKey"))
	case "GET " + Prefix + "/partner-keys":
		out["200"] = ok("the caller's keys", itemsOf("PartnerKey"))
	case "DELETE " + Prefix + "/partner-keys/:id":
		out["200"] = ok("the revoked key", openapi.Ref("PartnerKey"))
		out["404"] = errResp("not_found: no such key of the caller")
	case "GET " + APIPrefix + "/vacancies":
		out["200"] = ok("open vacancies, newest first", openapi.Obj([]string{"success", "data"}, map[string]any{"success": openapi.Bool, "data": pageOf()}))
		out["422"] = errResp("validation_failed")
	case "GET " + APIPrefix + "/vacancies/:id":
		out["200"] = ok("one open vacancy", openapi.Obj([]string{"success", "data"}, map[string]any{"success": openapi.Bool, "data": openapi.Ref("Vacancy")}))
		out["404"] = errResp("not_found")
	case "GET " + APIPrefix + "/health":
		out["200"] = ok("partner API health", openapi.Obj([]string{"status", "apiVersion"}, map[string]any{"status": openapi.Str, "apiVersion": openapi.Str}))
		out["503"] = errResp("unavailable: a dependency did not answer") // not the module /health answer
	case "GET " + PublicPrefix + "/rss/vacancies.xml":
		out["200"] = typed("RSS 2.0 feed", "application/rss+xml")
	case "GET " + PublicPrefix + "/widget.js":
		out["200"] = typed("the widget script", "text/javascript")
	case "GET " + SitemapPath:
		out["200"] = typed("urlset, or a sitemapindex beyond 5000 URLs", "application/xml")
		out["404"] = errResp("not_found: no such sitemap page")
	case "GET " + PagePrefix + "/vacancies", "GET " + PagePrefix + "/vacancies/:id", "GET " + PagePrefix + "/projects/:id", "GET " + PagePrefix + "/employers/:id":
		out["200"] = typed("HTML page", "text/html")
	default:
		out["200"] = map[string]any{"description": "OK"}
	}
	switch {
	case employerRoute(r.Path):
		out["401"] = errResp("auth_required")
	case strings.HasPrefix(r.Path, APIPrefix+"/"):
		out["401"] = errResp("key_invalid")
		out["429"] = errResp("rate_limited")
	}
	if strings.Contains(r.Path, ":id") && r.Method == http.MethodGet {
		out["404"] = errResp("not_found")
	}
	return out
}

func itemsOf(name string) map[string]any {
	return openapi.Obj([]string{"items"}, map[string]any{"items": map[string]any{"type": "array", "items": openapi.Ref(name)}})
}

func pageOf() map[string]any {
	return openapi.Obj([]string{"items", "total", "limit", "offset"}, map[string]any{
		"items": map[string]any{"type": "array", "items": openapi.Ref("Vacancy")},
		"total": openapi.Int64, "limit": openapi.Int64, "offset": openapi.Int64,
	})
}

var (
	strings_ = map[string]any{"type": "array", "items": openapi.Str}
)

var componentSchemas = map[string]any{
	"CreateProjectRequest": openapi.Obj([]string{"name"}, map[string]any{
		"name": openapi.Str, "description": openapi.Str, "city": openapi.Str, "url": map[string]any{"type": "string", "format": "uri"},
	}),
	"Project": openapi.Obj([]string{"id", "name", "createdAt"}, map[string]any{
		"id": openapi.Str, "name": openapi.Str, "description": openapi.Str, "city": openapi.Str, "url": openapi.Str, "pageUrl": openapi.Str, "createdAt": openapi.DateTime,
	}),
	"CreateVacancyRequest": openapi.Obj([]string{"projectId", "title", "description", "salary", "salaryCurrency", "city", "expiresAt"}, map[string]any{
		"projectId": openapi.Str, "title": openapi.Str, "description": openapi.Str,
		"salary":         map[string]any{"type": "integer", "format": "int64", "minimum": 1, "description": "minor units"},
		"salaryCurrency": map[string]any{"type": "string", "pattern": "^[A-Z]{3}$"},
		"skills":         strings_, "city": openapi.Str, "expiresAt": openapi.DateTime,
	}),
	"Vacancy": openapi.Obj([]string{"id", "title", "description", "salary", "salaryCurrency", "skills", "city", "project", "url", "createdAt", "expiresAt"}, map[string]any{
		"id": openapi.Str, "title": openapi.Str, "description": openapi.Str, "salary": openapi.Int64, "salaryCurrency": openapi.Str, "skills": strings_, "city": openapi.Str,
		"project":   openapi.Obj([]string{"id", "name"}, map[string]any{"id": openapi.Str, "name": openapi.Str}),
		"url":       openapi.Str,
		"status":    map[string]any{"type": "string", "enum": []string{"OPEN", "CLOSED", "EXPIRED"}},
		"createdAt": openapi.DateTime, "expiresAt": openapi.DateTime, "closedAt": openapi.DateTime,
	}),
	"PartnerKey": openapi.Obj([]string{"id", "createdAt"}, map[string]any{
		"id": openapi.Str, "key": map[string]any{"type": "string", "pattern": "^qb_pk_[A-Za-z0-9_-]{22,}$"},
		"createdAt": openapi.DateTime, "revokedAt": openapi.DateTime,
	}),
}
