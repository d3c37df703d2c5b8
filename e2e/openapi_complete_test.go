package e2e

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

// openAPIOp is what the complete-document tests read of an operation.
type openAPIOp struct {
	Summary     string   `json:"summary"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Servers     []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

type openAPIDoc struct {
	Tags []struct {
		Name string `json:"name"`
	} `json:"tags"`
	TagGroups []struct {
		Tags []string `json:"tags"`
	} `json:"x-tagGroups"`
	Paths      map[string]map[string]openAPIOp `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

func (d openAPIDoc) operations() map[string]openAPIOp {
	out := map[string]openAPIOp{}
	for path, item := range d.Paths {
		for method, op := range item {
			out[strings.ToUpper(method)+" "+path] = op
		}
	}
	return out
}

// TestCompleteDocument: the complete document holds every operation of
// every module slice the index lists (the proxy-base mirrors once, with
// both servers), each under its module's tag (or its admin tag, or the
// console tag) with a one-line summary and a
// description that says who may call it; at least 95% answer a typed 2xx.
func TestCompleteDocument(t *testing.T) {
	p := shared(t)
	var index struct {
		Modules []struct {
			Name    string `json:"name"`
			Prefix  string `json:"prefix"`
			OpenAPI string `json:"openapi"`
		} `json:"modules"`
		Full     string `json:"full"`
		Complete string `json:"complete"`
	}
	p.Get(t, "/api/platform/openapi.json", "").Decode(t, &index)
	if index.Complete != "/api/platform/openapi.full.json" {
		t.Fatalf("index complete = %q", index.Complete)
	}
	var doc, fintech openAPIDoc
	r := p.Get(t, index.Complete, "")
	if r.Status != http.StatusOK {
		t.Fatalf("%s: %d %.300s", index.Complete, r.Status, r.Body)
	}
	r.Decode(t, &doc)
	p.Get(t, index.Full, "").Decode(t, &fintech)
	ops := doc.operations()

	// Every operation of every slice, under the slice's module tag.
	tags := map[string]bool{}
	for _, tag := range doc.Tags {
		tags[tag.Name] = true
	}
	// Redoc hides a tag no group lists.
	grouped := map[string]int{}
	for _, g := range doc.TagGroups {
		for _, tag := range g.Tags {
			grouped[tag]++
		}
	}
	for tag := range tags {
		if grouped[tag] != 1 {
			t.Errorf("tag %s is in %d of the x-tagGroups", tag, grouped[tag])
		}
	}
	sliced := 0
	for _, m := range index.Modules {
		var slice openAPIDoc
		p.Get(t, m.OpenAPI, "").Decode(t, &slice)
		if !tags[m.Name] {
			t.Errorf("no tag of module %s", m.Name)
		}
		for key := range slice.operations() {
			sliced++
			op, ok := ops[key]
			if !ok {
				t.Errorf("the complete document lacks %s of module %s", key, m.Name)
				continue
			}
			// A module's admin operations have its admin tag; the console
			// page and the scripts browsers load, the console tag.
			if len(op.Tags) != 1 || (op.Tags[0] != m.Name && op.Tags[0] != m.Name+"-admin" && op.Tags[0] != "console") {
				t.Errorf("%s tags = %v, want [%s], [%s-admin] or [console]", key, op.Tags, m.Name, m.Name)
			}
		}
	}
	if sliced != len(ops) {
		t.Errorf("the slices hold %d operations, the complete document %d", sliced, len(ops))
	}
	// The constitution modules are also mounted under the proxy base: their
	// operations are listed once, with both servers.
	for _, mirror := range []string{"/api-backend/api/constitution/openapi.json", "/api-backend/api/planet/openapi.json"} {
		var slice openAPIDoc
		p.Get(t, mirror, "").Decode(t, &slice)
		for key := range slice.operations() {
			method, path, _ := strings.Cut(key, " ")
			twin := method + " " + strings.TrimPrefix(path, "/api-backend")
			op, ok := ops[twin]
			if !ok || len(op.Servers) != 2 || op.Servers[1].URL != "/api-backend" {
				t.Errorf("%s: twin %s in the document %v with servers %v", key, twin, ok, op.Servers)
			}
			if _, listed := ops[key]; listed {
				t.Errorf("%s is listed apart from its twin", key)
			}
		}
	}

	var typed []string
	var untyped []string
	for key, op := range ops {
		if strings.TrimSpace(op.Summary) == "" || strings.Contains(op.Summary, "\n") {
			t.Errorf("%s: summary %q is not one line", key, op.Summary)
		}
		what, who, ok := strings.Cut(op.Description, "**Who may call:** ")
		if !ok || strings.TrimSpace(what) == "" || strings.TrimSpace(who) == "" {
			t.Errorf("%s: description %q does not say what it does and who may call it", key, op.Description)
		}
		if typed2xx(op, doc.Components.Schemas) {
			typed = append(typed, key)
		} else {
			untyped = append(untyped, key)
		}
	}
	sort.Strings(untyped)
	t.Logf("operations: %d in the complete document (%d slices' operations, the proxy-base mirrors folded), %d in %s",
		len(ops), sliced, len(fintech.operations()), index.Full)
	t.Logf("typed 2xx: %d of %d (%.1f%%); untyped: %v", len(typed), len(ops), 100*float64(len(typed))/float64(len(ops)), untyped)
	if len(typed)*100 < 95*len(ops) {
		t.Errorf("only %d of %d operations answer a typed 2xx (want at least 95%%)", len(typed), len(ops))
	}
}

// typed2xx reports whether an operation's every 2xx answer has a described
// body: a schema with properties, items, a composition or a scalar type (a
// page's or a file's string), or no body at all (204, 304). An empty schema
// or a bare object is not typed.
func typed2xx(op openAPIOp, schemas map[string]map[string]any) bool {
	seen := 0
	for status, resp := range op.Responses {
		if !strings.HasPrefix(status, "2") {
			continue
		}
		seen++
		for _, mt := range resp.Content {
			if !describedSchema(mt.Schema, schemas) {
				return false
			}
		}
	}
	return seen > 0
}

func describedSchema(s map[string]any, schemas map[string]map[string]any) bool {
	if ref, ok := s["$ref"].(string); ok {
		target, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		return ok && describedSchema(target, schemas)
	}
	for _, k := range []string{"properties", "items", "allOf", "oneOf", "anyOf"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	typ, _ := s["type"].(string)
	return typ != "" && typ != "object"
}
