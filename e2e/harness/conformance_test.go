package harness

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

const conformanceDocJSON = `{
  "openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "/"}],
  "paths": {"/api/t/things": {"post": {
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}},
    "responses": {
      "201": {"description": "made", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
      "422": {"description": "bad", "content": {"application/json": {"schema": {"allOf": [{"$ref": "#/components/schemas/Error"}, {"type": "object", "properties": {"error": {"type": "string", "enum": ["validation_failed"]}}}]}}}}
    }}}},
  "components": {"schemas": {
    "Thing": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
    "Error": {"type": "object", "required": ["error", "message"], "properties": {"error": {"type": "string"}, "message": {"type": "string"}}}
  }}}`

// TestConformanceCatchesMismatches: an undocumented field, status or error
// code fails; a refused (hostile) request is not held to the document; a
// conforming exchange passes.
func TestConformanceCatchesMismatches(t *testing.T) {
	var answer struct {
		status int
		body   string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/platform/openapi.json":
			fmt.Fprint(w, `{"modules": [{"name": "t", "prefix": "/api/t", "openapi": "/api/t/openapi.json"}]}`)
		case "/api/t/openapi.json", "/api/openapi.json":
			fmt.Fprint(w, conformanceDocJSON)
		default:
			w.WriteHeader(answer.status)
			fmt.Fprint(w, answer.body)
		}
	}))
	defer srv.Close()
	p := &Platform{BaseURL: srv.URL, client: &http.Client{Timeout: 5 * time.Second}}
	cases := []struct {
		name   string
		body   any
		status int
		answer string
		fails  string
	}{
		{"conforming", map[string]any{"name": "a"}, 201, `{"id": "x"}`, ""},
		{"undocumented field", map[string]any{"name": "a"}, 201, `{"id": "x", "secret": 1}`, "secret"},
		{"undocumented status", map[string]any{"name": "a"}, 409, `{"error": "conflict", "message": "m"}`, "status is not supported"},
		{"undocumented code", map[string]any{}, 422, `{"error": "nope", "message": "m"}`, "nope"},
		{"accepted request the document refuses", map[string]any{"other": 1}, 201, `{"id": "x"}`, "request"},
		{"refused hostile request", "{not json", 422, `{"error": "validation_failed", "message": "m", "requestId": "r"}`, ""},
	}
	for _, c := range cases {
		answer.status, answer.body = c.status, c.answer
		rec := &recorder{TB: t}
		p.Do(rec, Request{Method: http.MethodPost, Path: "/api/t/things", Body: c.body})
		got := strings.Join(rec.failures, "\n")
		switch {
		case c.fails == "" && got != "":
			t.Errorf("%s: unexpected failure: %s", c.name, got)
		case c.fails != "" && !strings.Contains(got, c.fails):
			t.Errorf("%s: want a failure mentioning %q, got %q", c.name, c.fails, got)
		}
	}
}
