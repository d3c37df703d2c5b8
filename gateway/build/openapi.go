package build

import (
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

// OpenAPI builds the build module's document from the typed declarations:
// the employer side (bearer), the partner API (X-Build-Key), and the public
// feeds and pages.
func OpenAPI(routes []server.Route) map[string]any {
	doc := openapi.Build(routes, openapi.Doc{
		Title:       "Partner vacancy feeds",
		Description: "Employers post vacancies; partners read open ones with an X-Build-Key, embed the widget, or follow the RSS feed and sitemap.",
		Prefixes:    []string{Prefix, PagePrefix, SitemapPath},
		Operation: func(r server.Route, op map[string]any) {
			if strings.HasPrefix(r.Path, APIPrefix+"/") {
				op["security"] = []any{map[string]any{"buildKey": []string{}}}
			}
		},
	})
	comps := doc["components"].(map[string]any)
	comps["securitySchemes"].(map[string]any)["buildKey"] = map[string]any{"type": "apiKey", "in": "header", "name": HeaderKey}
	return doc
}
