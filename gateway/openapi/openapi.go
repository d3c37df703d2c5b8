// Package openapi generates OpenAPI 3.0 documents from the routes the server
// really registered, so the published slices cannot drift from the API.
package openapi

import (
	"net/http"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// Doc describes one document.
type Doc struct {
	Title       string
	Version     string
	Description string
	// Prefixes select the routes: a route is included when its path is a
	// prefix or lies under one.
	Prefixes []string
	// Public reports the routes that need no bearer token; nil means every
	// route needs one.
	Public func(method, path string) bool
	// Bodies names the request body schema of operations, by "METHOD path"
	// (the path as registered, e.g. "POST /api/gov/proposals/:id/votes");
	// a write without one is documented without a body.
	Bodies map[string]string
	// Responses documents the answers of an operation, by status; nil keeps
	// the generic default answer.
	Responses func(method, path string) map[string]any
	// Operation, when set, adds further module-specific detail to the
	// generated operation of a route, after Bodies and Responses.
	Operation func(r server.Route, op map[string]any)
	// Schemas are the document's components.schemas, merged with Error.
	Schemas map[string]any
}

// ErrorSchema is the error shape every endpoint answers with.
var errorSchema = map[string]any{
	"type":     "object",
	"required": []string{"error", "message"},
	"properties": map[string]any{
		"error":   map[string]any{"type": "string"},
		"message": map[string]any{"type": "string"},
		"fields":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
	},
}

// Ref is a JSON reference to a component schema.
func Ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// JSONContent wraps a schema as an application/json content map.
func JSONContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

// Build generates the document of the routes selected by d.
func Build(routes []server.Route, d Doc) map[string]any {
	paths := map[string]any{}
	for _, r := range routes {
		module, ok := selected(r.Path, d.Prefixes)
		if !ok {
			continue
		}
		path, params := Path(r.Path)
		if r.Class == ratelimit.Money {
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "required": false,
				"schema": map[string]any{"type": "string", "maxLength": 255}})
		}
		op := map[string]any{
			"summary":            r.Summary,
			"operationId":        OperationID(r.Method, r.Path),
			"tags":               []string{module},
			"x-rate-limit-class": r.Class.String(),
			"responses": map[string]any{
				"default": map[string]any{"description": "JSON body; errors are { error, message }", "content": JSONContent(Ref("Error"))},
			},
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			op["requestBody"] = map[string]any{"content": JSONContent(map[string]any{"type": "object"})}
		}
		if d.Public != nil && d.Public(r.Method, r.Path) {
			op["security"] = []any{}
		} else {
			op["security"] = []any{map[string]any{"bearerAuth": []string{}}}
		}
		if d.Responses != nil {
			op["responses"] = d.Responses(r.Method, r.Path)
		}
		if d.Bodies != nil {
			if body, ok := d.Bodies[r.Method+" "+r.Path]; ok {
				op["requestBody"] = map[string]any{"required": true, "content": JSONContent(Ref(body))}
			} else {
				delete(op, "requestBody")
			}
		}
		if d.Operation != nil {
			d.Operation(r, op)
		}
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(r.Method)] = op
	}
	schemas := map[string]any{"Error": errorSchema}
	for k, v := range d.Schemas {
		schemas[k] = v
	}
	version := d.Version
	if version == "" {
		version = "1.0.0"
	}
	info := map[string]any{"title": d.Title, "version": version}
	if d.Description != "" {
		info["description"] = d.Description
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    info,
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
			"schemas":         schemas,
		},
	}
}

// Handler serves Build of the routes registered when it is called (so routes
// mounted after it are included).
func Handler(routes func() []server.Route, d Doc) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return c.JSON(Build(routes(), d))
	}
}

// selected reports whether path lies under one of prefixes, and the module
// name (the prefix's last segment) it belongs to.
func selected(path string, prefixes []string) (string, bool) {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return p[strings.LastIndex(p, "/")+1:], true
		}
	}
	return "", false
}

// Path turns fiber's ":param" segments into OpenAPI's "{param}" and returns
// the path parameters.
func Path(p string) (string, []any) {
	parts := strings.Split(p, "/")
	var params []any
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			name := s[1:]
			parts[i] = "{" + name + "}"
			params = append(params, map[string]any{"name": name, "in": "path", "required": true,
				"schema": map[string]any{"type": "string"}})
		}
	}
	return strings.Join(parts, "/"), params
}

// OperationID names an operation from its method and path, e.g.
// POST /api/mask/masks/:id/revoke → postMaskMasksIdRevoke.
func OperationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, s := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '.' || r == ':' || r == '-' }) {
		if s == "api" {
			continue
		}
		b.WriteString(strings.ToUpper(s[:1]) + s[1:])
	}
	return b.String()
}

// Schema primitives shared by the module slices.
var (
	Str      = map[string]any{"type": "string"}
	Int64    = map[string]any{"type": "integer", "format": "int64"}
	Number   = map[string]any{"type": "number"}
	Bool     = map[string]any{"type": "boolean"}
	DateTime = map[string]any{"type": "string", "format": "date-time"}
)

// Obj is an object schema with its properties and required names.
func Obj(required []string, props map[string]any) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sorted := append([]string(nil), required...)
		sort.Strings(sorted)
		m["required"] = sorted
	}
	return m
}

// ListOf is the `{ items, nextCursor }` page of a component schema.
func ListOf(name string) map[string]any {
	return map[string]any{"type": "object", "required": []string{"items", "nextCursor"}, "properties": map[string]any{
		"items":      map[string]any{"type": "array", "items": Ref(name)},
		"nextCursor": map[string]any{"type": "string", "nullable": true},
	}}
}

// Answer is a response with a JSON body of the named component schema.
func Answer(description, schema string) map[string]any {
	return map[string]any{"description": description, "content": JSONContent(Ref(schema))}
}

// ErrorAnswer is an error response: the Error schema, its code described.
func ErrorAnswer(description string) map[string]any { return Answer(description, "Error") }
