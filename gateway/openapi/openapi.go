// Package openapi generates OpenAPI 3.0 documents from the routes the server
// really registered, so the published slices cannot drift from the API.
package openapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
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
	// Tag, when set, is the one tag of every operation; otherwise an
	// operation is tagged with the last segment of its prefix.
	Tag string
}

// Access says who may call a declared operation: its Caller, or what its
// APIKey, Role and Public imply.
func Access(d *server.Declaration) string {
	switch {
	case d.Caller != "":
		return d.Caller
	case d.APIKey != "":
		return "a partner, with its key in the `" + d.APIKey + "` header (no bearer token)"
	case d.Role != "":
		return "a " + d.Role + ", with `Authorization: Bearer <token>`; any other user gets 403 forbidden"
	case d.Public:
		return "anyone; no token"
	default:
		return "any signed-in user, with `Authorization: Bearer <token>`"
	}
}

// bearerScheme is the security scheme of a user's JWT.
var bearerScheme = map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}

// APIKeyScheme names the security scheme of a key sent in header:
// X-Build-Key → buildKey.
func APIKeyScheme(header string) string {
	name := strings.ReplaceAll(strings.TrimPrefix(header, "X-"), "-", "")
	if name == "" {
		return "apiKey"
	}
	return strings.ToLower(name[:1]) + name[1:]
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
	schemas := map[string]any{"Error": errorSchema}
	// The security schemes the operations use, so an all-public document
	// declares none.
	security := map[string]any{}
	for _, r := range routes {
		module, ok := selected(r.Path, d.Prefixes)
		if !ok {
			continue
		}
		if d.Tag != "" {
			module = d.Tag
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
			op["requestBody"] = map[string]any{"description": IgnoredFields, "content": JSONContent(map[string]any{"type": "object", "additionalProperties": true})}
		}
		// Every route needs a token unless its declaration says Public.
		op["security"] = []any{map[string]any{"bearerAuth": []string{}}}
		isPaged := false
		if r.Decl != nil {
			// A typed declaration is the whole truth of its operation.
			declared, comps, err := reflectRoute(r, path)
			if err != nil {
				panic(err) // a declaration that cannot be described is a programming error
			}
			overlay(op, declared)
			for k, v := range comps {
				schemas[k] = v
			}
			isPaged = hasParam(op, "cursor")
		}
		if r.Decl != nil && r.Decl.Description != "" {
			op["description"] = r.Decl.Description + "\n\n**Who may call:** " + Access(r.Decl) + "."
			if r.KeyScope != "" {
				op["description"] = op["description"].(string) + " A restricted API key needs the scope `" + r.KeyScope + "`."
			}
		}
		if r.KeyScope != "" {
			op["x-api-key-scope"] = r.KeyScope
		}
		for _, req := range asAnyList(op["security"]) {
			for name := range req.(map[string]any) {
				security[name] = bearerScheme
				if r.Decl != nil && r.Decl.APIKey != "" && name == APIKeyScheme(r.Decl.APIKey) {
					security[name] = map[string]any{"type": "apiKey", "in": "header", "name": r.Decl.APIKey}
				}
			}
		}
		completeResponses(r, op, isPaged)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(r.Method)] = op
	}
	finishReflected(paths, schemas)
	version := d.Version
	if version == "" {
		version = "1.0.0"
	}
	info := map[string]any{"title": d.Title, "version": version, "license": License}
	description := IgnoredFields
	if d.Description != "" {
		description = d.Description + "\n\n" + IgnoredFields
	}
	info["description"] = description
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    info,
		"servers": []any{map[string]any{"url": "/", "description": "the platform serving this document"}},
		"tags":    tagsOf(paths),
		"paths":   paths,
		"components": map[string]any{
			"schemas": schemas,
		},
	}
	if len(security) > 0 {
		doc["components"].(map[string]any)["securitySchemes"] = security
	}
	openRequestBodies(paths, schemas)
	PruneSchemas(doc)
	return doc
}

// openRequestBodies says on every request body, and in its object schema
// (additionalProperties true), that undeclared fields are ignored.
func openRequestBodies(paths map[string]any, schemas map[string]any) {
	for _, item := range paths {
		for _, o := range item.(map[string]any) {
			body, _ := o.(map[string]any)["requestBody"].(map[string]any)
			if body == nil {
				continue
			}
			if _, ok := body["description"]; !ok {
				body["description"] = IgnoredFields
			}
			content, _ := body["content"].(map[string]any)
			mt, _ := content["application/json"].(map[string]any)
			schema, _ := mt["schema"].(map[string]any)
			if ref, ok := schema["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if s, ok := schemas[name].(map[string]any); ok {
					schema = copyMap(s)
					schemas[name] = schema
				}
			}
			if schema != nil && schema["type"] == "object" {
				if _, set := schema["additionalProperties"]; !set {
					schema["additionalProperties"] = true
				}
			}
		}
	}
}

// copyMap is a shallow copy, so a module's package-level schema is not
// changed by building a document.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// License is the info.license of every document: the API is proprietary
// (SPDX's LicenseRef- convention for a license not on its list).
var License = map[string]any{"name": "LicenseRef-Proprietary", "url": "https://spdx.org/licenses/"}

// IgnoredFields is said in every document and on every request body: the
// API reads the fields a body declares and ignores any other.
const IgnoredFields = "Request bodies are JSON objects; fields a body does not declare are ignored (additionalProperties is true)."

// tagsOf declares the tags the operations use.
func tagsOf(paths map[string]any) []any {
	seen := map[string]bool{}
	for _, item := range paths {
		for _, op := range item.(map[string]any) {
			for _, t := range op.(map[string]any)["tags"].([]string) {
				seen[t] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for t := range seen {
		names = append(names, t)
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"name": n, "description": "The " + n + " module"}
	}
	return out
}

// completeResponses adds the answers every operation can give whatever the
// module declared, merging their codes into a declared answer of the same
// status: 400 for an unreadable or oversized body, 401 when it needs a token,
// 404 when it has path parameters, 422 (the server refuses text that is not
// valid UTF-8 or holds NUL in any query parameter or body field), 429 from
// the rate limiter, 500 and 503. An operation whose module declares no
// answers keeps a generic JSON 2XX and a generic 4XX.
func completeResponses(r server.Route, op map[string]any, paged bool) {
	resp, _ := op["responses"].(map[string]any)
	if resp == nil {
		resp = map[string]any{}
	}
	op["responses"] = resp
	ensure := func(status, description string, codes ...string) {
		cur, ok := resp[status].(map[string]any)
		if !ok {
			resp[status] = ErrorAnswer(strings.Join(codes, ", ") + ": " + description)
			return
		}
		errProp := errorProperty(cur)
		enum, ok := errProp["enum"].([]string)
		if list, isList := errProp["enum"].([]any); isList {
			// an answer that went through JSON (a reflected declaration)
			enum, ok = make([]string, 0, len(list)), true
			for _, v := range list {
				s, _ := v.(string)
				enum = append(enum, s)
			}
		}
		if !ok {
			return // a declared answer with its own schema or open codes
		}
		for _, c := range codes {
			if !containsString(enum, c) {
				enum = append(enum, c)
			}
		}
		errProp["enum"] = enum
	}
	if _, ok := resp["default"]; ok && len(resp) == 1 {
		// The module describes none of this operation's answers yet.
		delete(resp, "default")
		resp["2XX"] = map[string]any{"description": "the answer (its body is not described in detail yet)",
			"content": JSONContent(map[string]any{})}
		resp["4XX"] = ErrorAnswer("a client error (its codes are not enumerated yet)")
	} else {
		// A GET or HEAD carries no body, so its answers do not list
		// payload_too_large (a client that sends one anyway still gets it).
		bodiless := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case paged && bodiless:
			ensure("400", "the cursor is not one this API issued", "invalid_cursor")
		case paged:
			ensure("400", "the cursor is not one this API issued, or the body is larger than 1 MiB", "invalid_cursor", "payload_too_large")
		case bodiless:
			// no 400 of its own
		case r.Method == http.MethodDelete:
			ensure("400", "the body is larger than 1 MiB", "payload_too_large")
		default:
			ensure("400", "the body is not JSON, lacks Content-Type: application/json or is larger than 1 MiB",
				"invalid_json", "content_type_required", "payload_too_large")
		}
		if paged && !hasParam(op, "cursor") {
			op["parameters"] = append(asAnyList(op["parameters"]), map[string]any{"name": "cursor", "in": "query", "required": false,
				"description": "the nextCursor of the previous page", "schema": map[string]any{"type": "string"}})
		}
		if sec, ok := op["security"].([]any); ok && len(sec) > 0 {
			ensure("401", "no valid bearer token", CodeAuthRequired)
			if _, bearer := sec[0].(map[string]any)["bearerAuth"]; bearer {
				// The bearer may be a restricted API key (issue 35).
				ensure("401", "an unknown, revoked or expired API key", "key_invalid")
				if r.KeyScope != "" {
					ensure("403", "the API key lacks the scope "+r.KeyScope, "insufficient_scope")
				} else {
					ensure("403", "API keys cannot call this route", "forbidden")
				}
			}
		}
		if strings.Contains(r.Path, "/:") {
			ensure("404", "nothing at this path", "not_found")
		}
		ensure("422", "a field is missing or invalid (fields names each)", "validation_failed")
		ensure("429", "retry after the Retry-After seconds", "rate_limited")
	}
	if _, ok := resp["503"]; !ok && r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/health") {
		resp["503"] = Degraded()
	}
	ensure("500", "the answer carries the requestId", "internal")
	ensure("503", "a dependency did not answer; retry (writes with the same Idempotency-Key)", "unavailable")
}

func hasParam(op map[string]any, name string) bool {
	for _, p := range asAnyList(op["parameters"]) {
		if m, ok := p.(map[string]any); ok && m["name"] == name {
			return true
		}
	}
	return false
}

// errorProperty returns the schema of the error property of an answer
// ErrorAnswer built with codes, or nil.
func errorProperty(answer map[string]any) map[string]any {
	content, _ := answer["content"].(map[string]any)
	mt, _ := content["application/json"].(map[string]any)
	schema, _ := mt["schema"].(map[string]any)
	all, _ := schema["allOf"].([]any)
	if len(all) != 2 {
		return nil
	}
	second, _ := all[1].(map[string]any)
	props, _ := second["properties"].(map[string]any)
	errProp, _ := props["error"].(map[string]any)
	return errProp
}

func containsString(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// CodeAuthRequired is the error code of a request without a valid token.
const CodeAuthRequired = "auth_required"

// PruneSchemas removes the component schemas no operation reaches, so a
// slice of a module that shares its schemas with another lists only its own.
func PruneSchemas(doc map[string]any) {
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	if schemas == nil {
		return
	}
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !used[name] {
					used[name] = true
					walk(schemas[name])
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc["paths"])
	for name := range schemas {
		if !used[name] {
			delete(schemas, name)
		}
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
			schema := map[string]any{"type": "string"}
			if name == "id" {
				schema = KSUID // every :id is an id the platform minted
			}
			params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": schema})
		}
	}
	return strings.Join(parts, "/"), params
}

// OperationID names an operation from its method and path, e.g.
// POST /api/mask/masks/:id/revoke → postMaskMasksIdRevoke.
func OperationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	rest, api := strings.CutPrefix(path, "/api/")
	if !api {
		b.WriteString("Site") // pages and feeds outside /api
	}
	for _, s := range strings.FieldsFunc(rest, func(r rune) bool { return r == '/' || r == '.' || r == ':' || r == '-' || r == '_' }) {
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
	// KSUID is an id the platform minted: a 27-character base62 ksuid.
	KSUID = map[string]any{"type": "string", "pattern": "^[0-9A-Za-z]{27}$", "minLength": 27, "maxLength": 27,
		"description": "ksuid (27 base62 characters)"}
	// Amount is a money amount a client sends: integer minor units, at
	// least 1 and at most 10^15; strings, fractions and larger numbers are
	// refused with 422 validation_failed.
	Amount = map[string]any{"type": "integer", "format": "int64", "minimum": 1, "maximum": bind.MaxAmount,
		"description": "integer minor units (1 to 10^15)"}
	// MinorUnits is an amount the API answers with: integer minor units.
	MinorUnits = map[string]any{"type": "integer", "format": "int64", "description": "integer minor units"}
)

// Degraded is the answer of a /health endpoint whose database does not
// answer: 503 with { status: "degraded", database: "unreachable" }.
func Degraded() map[string]any {
	return map[string]any{"description": "the database does not answer", "content": JSONContent(Obj([]string{"status", "database"}, map[string]any{
		"status":   map[string]any{"type": "string", "enum": []string{"degraded"}},
		"database": map[string]any{"type": "string", "enum": []string{"unreachable"}},
	}))}
}

// Text is a string of at most max characters.
func Text(max int) map[string]any { return map[string]any{"type": "string", "maxLength": max} }

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
// When the description starts with the codes ("not_found", "voting_closed
// or already_voted: …", "a, b or c"), the schema enumerates them, so an
// answer with another code does not conform.
func ErrorAnswer(description string) map[string]any {
	codes := ErrorCodes(description)
	if len(codes) == 0 {
		return Answer(description, "Error")
	}
	return map[string]any{"description": description, "content": JSONContent(map[string]any{"allOf": []any{
		Ref("Error"),
		map[string]any{"type": "object", "properties": map[string]any{"error": map[string]any{"type": "string", "enum": codes}}},
	}})}
}

var codeRe = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)+$|^[a-z]+$`)

// ErrorCodes returns the error codes an error description starts with: the
// text before the first ':' as a list "a", "a or b", "a, b or c" of
// snake_case words; nil when that text is prose.
func ErrorCodes(description string) []string {
	head, _, _ := strings.Cut(description, ":")
	head = strings.ReplaceAll(head, " or ", ",")
	var codes []string
	for _, c := range strings.Split(head, ",") {
		c = strings.TrimSpace(c)
		if !codeRe.MatchString(c) || (!strings.Contains(c, "_") && !knownWord[c]) {
			return nil
		}
		codes = append(codes, c)
	}
	return codes
}

// knownWord are the single-word error codes.
var knownWord = map[string]bool{"internal": true, "unavailable": true, "forbidden": true}

// Merge combines module slices into one document with info: the union of
// their paths, tags, security schemes and component schemas. A schema name two slices define
// differently is renamed in the later slice to its module's name followed by
// the schema's ("Stats" → "GovStats"), its references rewritten.
func Merge(info map[string]any, slices []Slice) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{}
	tags := map[string]any{}
	security := map[string]any{"bearerAuth": bearerScheme}
	for _, sl := range slices {
		doc := sl.Doc
		comps, _ := doc["components"].(map[string]any)
		own, _ := comps["schemas"].(map[string]any)
		if schemes, ok := comps["securitySchemes"].(map[string]any); ok {
			for name, scheme := range schemes {
				security[name] = scheme // a module's own scheme (build's X-Build-Key)
			}
		}
		renames := map[string]string{}
		for name, schema := range own {
			if prev, ok := schemas[name]; ok && !reflect.DeepEqual(canonical(prev), canonical(schema)) {
				renames["#/components/schemas/"+name] = "#/components/schemas/" + strings.ToUpper(sl.Name[:1]) + sl.Name[1:] + name
			}
		}
		if len(renames) > 0 {
			doc = rewriteRefs(doc, renames).(map[string]any)
			comps, _ = doc["components"].(map[string]any)
			own, _ = comps["schemas"].(map[string]any)
			for from, to := range renames {
				name := strings.TrimPrefix(from, "#/components/schemas/")
				own[strings.TrimPrefix(to, "#/components/schemas/")] = own[name]
				delete(own, name)
			}
		}
		for name, schema := range own {
			schemas[name] = schema
		}
		p, _ := doc["paths"].(map[string]any)
		for k, v := range p {
			paths[k] = v
		}
		for _, t := range asAnyList(doc["tags"]) {
			if m, ok := t.(map[string]any); ok {
				tags[m["name"].(string)] = m
			}
		}
	}
	names := make([]string, 0, len(tags))
	for n := range tags {
		names = append(names, n)
	}
	sort.Strings(names)
	tagList := make([]any, len(names))
	for i, n := range names {
		tagList[i] = tags[n]
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    info,
		"servers": []any{map[string]any{"url": "/", "description": "the platform serving this document"}},
		"tags":    tagList,
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": security,
			"schemas":         schemas,
		},
	}
}

// Slice is one module's document, by module name.
type Slice struct {
	Name string
	Doc  map[string]any
}

func asAnyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// canonical round-trips v through JSON so documents built in process and
// decoded from JSON compare equal.
func canonical(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

func rewriteRefs(v any, renames map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" && renames[s] != "" {
				out[k] = renames[s]
				continue
			}
			out[k] = rewriteRefs(e, renames)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewriteRefs(e, renames)
		}
		return out
	}
	return v
}
