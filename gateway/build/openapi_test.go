package build

import (
	"encoding/json"
	"github.com/fintech/platform/gateway/server/servertest"
	"testing"
)

// TestOpenAPI builds the slice from the routes Register really declares.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, &fakeStore{}, Config{})
	raw, _ := json.Marshal(servertest.Document(t, srv, Prefix+"/openapi.json"))
	var d struct {
		Paths map[string]map[string]struct {
			Security  []map[string]any          `json:"security"`
			XClass    string                    `json:"x-rate-limit-class"`
			Responses map[string]map[string]any `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Paths) != 17 {
		t.Fatalf("%d paths: %v", len(d.Paths), d.Paths)
	}
	list := d.Paths[APIPrefix+"/vacancies"]["get"]
	if len(list.Security) != 1 || list.Security[0]["buildKey"] == nil || list.XClass != "partner" || list.Responses["401"] == nil {
		t.Fatalf("partner list = %+v", list)
	}
	rss := d.Paths[PublicPrefix+"/rss/vacancies.xml"]["get"]
	if _, ok := rss.Responses["200"]["content"].(map[string]any)["application/rss+xml"]; !ok || len(rss.Security) != 0 {
		t.Fatalf("rss = %+v", rss)
	}
	create := d.Paths[Prefix+"/vacancies"]["post"]
	for _, st := range []string{"201", "401", "403", "404", "422"} {
		if create.Responses[st] == nil {
			t.Fatalf("create vacancy lacks %s", st)
		}
	}
	skills := d.Components.Schemas["CreateVacancyRequest"].Properties["skills"]
	if skills["type"] != "array" && skills["$ref"] == nil {
		t.Fatalf("skills = %v", skills)
	}
	if d.Components.Schemas["Vacancy"].Properties["status"]["enum"] == nil {
		t.Fatalf("Vacancy = %v", d.Components.Schemas["Vacancy"])
	}
}
