package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

// TestBuildOpenAPIAndHealth checks the module's health, its OpenAPI slice
// (every route, the partner key scheme) and its entry in the platform index,
// then sends every documented build route malformed and hostile input with
// and without credentials: refusals, never a 5xx.
func TestBuildOpenAPIAndHealth(t *testing.T) {
	p := shared(t)
	if r := p.Get(t, "/api/build/health", ""); r.Status != http.StatusOK || r.JSON(t)["status"] != "ok" {
		t.Fatalf("health: %d %s", r.Status, r.Body)
	}
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	r := p.Get(t, "/api/build/openapi.json", "")
	r.Decode(t, &doc)
	for _, path := range []string{"/api/build/projects", "/api/build/vacancies", "/api/build/vacancies/{id}/close",
		"/api/build/partner-keys", "/api/build/partner-keys/{id}", "/api/build/public/v1/vacancies",
		"/api/build/public/v1/vacancies/{id}", "/api/build/public/v1/health", "/api/build/public/rss/vacancies.xml",
		"/api/build/public/widget.js", "/sitemap.xml", "/build/vacancies/{id}"} {
		if doc.Paths[path] == nil {
			t.Errorf("slice lacks %s", path)
		}
	}
	if doc.OpenAPI == "" || doc.Components.SecuritySchemes["buildKey"]["name"] != "X-Build-Key" {
		t.Fatalf("slice: %s", r.Body)
	}
	var index struct {
		Modules []struct{ Name, OpenAPI string } `json:"modules"`
	}
	p.Get(t, "/api/platform/openapi.json", "").Decode(t, &index)
	found := false
	for _, m := range index.Modules {
		found = found || (m.Name == "build" && m.OpenAPI == "/api/build/openapi.json")
	}
	if !found {
		t.Fatalf("platform index lacks build: %+v", index.Modules)
	}

	u := p.Register(t, "build-fuzz")
	_, key := buildKey(t, p, u)
	bodies := []any{[]byte(`not json`), []byte(`[]`), []byte(`{}`), []byte(`null`),
		map[string]any{"projectId": []int{1}, "title": 5, "salary": "10", "skills": map[string]any{}, "expiresAt": true, "name": nil},
		map[string]any{"projectId": strings.Repeat("x", 5000), "title": "<script>alert(1)</script>", "salary": 1e300,
			"description": strings.Repeat("d", 30_000), "url": "javascript:alert(1)", "city": "\u0000", "expiresAt": "1999-01-01T00:00:00Z"}}
	sent := 0
	for path, methods := range doc.Paths {
		for method := range methods {
			method = strings.ToUpper(method)
			for _, id := range []string{"nope", "00000000000000000000000000", "%27%3B--", strings.Repeat("9", 300), "%3Cscript%3E"} {
				concrete := fillParams(path, id)
				for _, token := range []string{"", u.Token} {
					headers := map[string]string{"X-Build-Key": key, "Origin": "https://evil.example"}
					if method == http.MethodGet || method == http.MethodDelete {
						for _, q := range []string{"?limit=-1&offset=abc&city=%00&skill=%ff", "?limit=99999999999999999999&offset=99999999999&page=0", "?city=" + strings.Repeat("c", 500)} {
							check(t, p, harness.Request{Method: method, Path: concrete + q, Token: token, Headers: headers})
							sent++
						}
						continue
					}
					for _, b := range bodies {
						check(t, p, harness.Request{Method: method, Path: concrete, Token: token, Body: b, Headers: headers})
						sent++
					}
				}
			}
		}
	}
	if sent < 200 {
		t.Fatalf("only %d requests sent", sent)
	}
}
