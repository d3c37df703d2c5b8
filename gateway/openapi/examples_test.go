package openapi

import (
	"regexp"
	"strings"
	"testing"
)

// TestAddExamples: leaf schemas get examples from their declaration (a
// pattern, a format, a length floor, a money or currency field name) that
// satisfy their constraints; enums and unhinted fields are left to the
// sampler; an existing example is kept.
func TestAddExamples(t *testing.T) {
	t.Parallel()
	ksuid := copyMap(KSUID)
	doc := map[string]any{"components": map[string]any{"schemas": map[string]any{
		"Transfer": Obj(nil, map[string]any{
			"id":        ksuid,
			"walletId":  Text(200),
			"amountKzt": copyMap(Amount),
			"currency":  map[string]any{"type": "string", "pattern": "^[A-Z]{3}$"},
			"short":     map[string]any{"type": "string", "maxLength": 2, "format": "email"},
			"toEmail":   map[string]any{"type": "string", "format": "email"},
			"createdAt": copyMap(DateTime),
			"secret":    map[string]any{"type": "string", "minLength": 16, "maxLength": 64},
			"key":       map[string]any{"type": "string", "pattern": "^mk_live_[0-9a-f]{32}$"},
			"status":    map[string]any{"type": "string", "enum": []any{"pending", "done"}},
			"plain":     copyMap(Str),
			"kept":      map[string]any{"type": "string", "example": "as declared"},
		}),
	}}}
	AddExamples(doc)
	props := doc["components"].(map[string]any)["schemas"].(map[string]any)["Transfer"].(map[string]any)["properties"].(map[string]any)
	ex := func(name string) any { return props[name].(map[string]any)["example"] }
	if id, _ := ex("id").(string); !regexp.MustCompile(`^[0-9A-Za-z]{27}$`).MatchString(id) || strings.Contains(id, "string") {
		t.Errorf("ksuid example = %q", id)
	}
	if id, _ := ex("walletId").(string); len(id) != 27 {
		t.Errorf("walletId example = %q, want a ksuid", id)
	}
	for name, want := range map[string]any{"amountKzt": int64(ExampleAmount), "currency": "KZT", "toEmail": ExampleEmail,
		"createdAt": ExampleTime, "kept": "as declared"} {
		if got := ex(name); got != want {
			t.Errorf("%s example = %v, want %v", name, got, want)
		}
	}
	if s, _ := ex("secret").(string); len(s) < 16 || len(s) > 64 || strings.Contains(s, "stringstring") {
		t.Errorf("secret example = %q", s)
	}
	if k, _ := ex("key").(string); !regexp.MustCompile(`^mk_live_[0-9a-f]{32}$`).MatchString(k) {
		t.Errorf("key example = %q", k)
	}
	for _, name := range []string{"short", "status", "plain"} {
		if got, ok := props[name].(map[string]any)["example"]; ok {
			t.Errorf("%s got example %v (it breaks a constraint, or the sampler shows better)", name, got)
		}
	}
}

// TestAddCodeSamples: the curl and TypeScript samples of an operation carry
// its path parameter, credentials, Idempotency-Key and example body; an
// API key scheme sends its header; a stream is read with streamEvents.
func TestAddCodeSamples(t *testing.T) {
	t.Parallel()
	op := func(extra map[string]any) map[string]any {
		o := map[string]any{"responses": map[string]any{"200": Answer("ok", "Error")}}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}
	doc := map[string]any{
		"paths": map[string]any{
			"/api/x/wallets/{id}/pay": map[string]any{"post": op(map[string]any{
				"security": []any{map[string]any{"bearerAuth": []any{}}},
				"parameters": []any{
					map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string", "example": "2Kq7xW"}},
					map[string]any{"name": "Idempotency-Key", "in": "header", "schema": Str},
				},
				"requestBody": map[string]any{"content": JSONContent(Obj([]string{"amount"}, map[string]any{
					"amount": map[string]any{"type": "integer", "example": 2500}, "memo": map[string]any{"type": "string", "example": "lunch"},
					"other": Str,
				}))},
			})},
			"/api/x/builds": map[string]any{"get": op(map[string]any{"security": []any{map[string]any{"buildKey": []any{}}}})},
			"/api/x/events": map[string]any{"get": op(map[string]any{"security": []any{map[string]any{"bearerAuth": []any{}}},
				"responses": map[string]any{"200": map[string]any{"description": "stream", "content": map[string]any{"text/event-stream": map[string]any{}}}}})},
		},
		"components": map[string]any{"securitySchemes": map[string]any{
			"bearerAuth": bearerScheme, "buildKey": map[string]any{"type": "apiKey", "in": "header", "name": "X-Build-Key"},
		}},
	}
	AddCodeSamples(doc, "@x/sdk")
	source := func(path, method string, i int) string {
		op := doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
		return op["x-codeSamples"].([]any)[i].(map[string]any)["source"].(string)
	}
	checks := []struct {
		path, method string
		i            int
		want         []string
		not          []string
	}{
		{"/api/x/wallets/{id}/pay", "post", 0, []string{`curl -sS -X POST "$API/api/x/wallets/2Kq7xW/pay"`, `Bearer $TOKEN`,
			`Idempotency-Key: $(uuidgen)`, `-d '{"amount":2500,"memo":"lunch"}'`}, []string{"other"}},
		{"/api/x/wallets/{id}/pay", "post", 1, []string{`import { createClient } from "@x/sdk";`, `token: process.env.TOKEN`,
			`api.POST("/api/x/wallets/{id}/pay", {`, `params: { path: { id: "2Kq7xW" } }`, "amount: 2500,", `memo: "lunch",`}, nil},
		{"/api/x/builds", "get", 0, []string{`-H "X-Build-Key: $BUILD_KEY"`}, []string{"Bearer", "Idempotency"}},
		{"/api/x/builds", "get", 1, []string{`headers: { "X-Build-Key": process.env.BUILD_KEY ?? "" }`}, []string{"token:"}},
		{"/api/x/events", "get", 0, []string{`curl -sSN "$API/api/x/events"`}, nil},
		{"/api/x/events", "get", 1, []string{`for await (const message of streamEvents(api, "/api/x/events"))`}, nil},
	}
	for _, c := range checks {
		src := source(c.path, c.method, c.i)
		for _, w := range c.want {
			if !strings.Contains(src, w) {
				t.Errorf("%s %s sample %d lacks %q:\n%s", c.method, c.path, c.i, w, src)
			}
		}
		for _, n := range c.not {
			if strings.Contains(src, n) {
				t.Errorf("%s %s sample %d has %q:\n%s", c.method, c.path, c.i, n, src)
			}
		}
	}
}
