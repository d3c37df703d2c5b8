package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// SampleBaseURL is the origin the code samples call: `make run`'s.
const SampleBaseURL = "http://127.0.0.1:8080"

// AddCodeSamples gives every operation of doc Redoc's x-codeSamples: a curl
// command and a call of the TypeScript SDK (package sdk, its createClient
// and typed GET/POST/… methods), both built from the operation's
// declaration: its path parameters, required query and header parameters,
// its security (the bearer token, or the API key header it names), an
// Idempotency-Key where the operation takes one, and a JSON body made of the
// schema's examples (AddExamples first). A server-sent event stream is read
// with the SDK's streamEvents.
func AddCodeSamples(doc map[string]any, sdk string) {
	schemes := asMap(asMap(doc["components"])["securitySchemes"])
	comps := asMap(asMap(doc["components"])["schemas"])
	for path, item := range asMap(doc["paths"]) {
		for method, o := range asMap(item) {
			op := asMap(o)
			if op == nil {
				continue
			}
			s := sampleOf(path, strings.ToUpper(method), op, schemes, comps)
			op["x-codeSamples"] = []any{
				map[string]any{"lang": "Shell", "label": "curl", "source": s.curl()},
				map[string]any{"lang": "TypeScript", "label": "TypeScript SDK", "source": s.typescript(sdk)},
			}
		}
	}
}

// param is a parameter's name and example value.
type param struct {
	name  string
	value any
}

// sample is what both code samples of one operation send.
type sample struct {
	method, path string
	pathParams   []param
	query        []param
	headers      []param // required headers, other than the credentials
	bearer       bool
	keyHeader    string // the API key header of an apiKey scheme
	idempotency  bool
	body         any // nil: none
	stream       bool
}

func sampleOf(path, method string, op, schemes, comps map[string]any) sample {
	s := sample{method: method, path: path}
	for _, p := range asAnyList(op["parameters"]) {
		pm := asMap(p)
		name, _ := pm["name"].(string)
		in, _ := pm["in"].(string)
		required, _ := pm["required"].(bool)
		value := param{name, valueOf(asMap(pm["schema"]), name, comps, 0)}
		switch {
		case in == "path":
			s.pathParams = append(s.pathParams, value)
		case in == "header" && strings.EqualFold(name, "Idempotency-Key"):
			s.idempotency = true
		case in == "query" && required:
			s.query = append(s.query, value)
		case in == "header" && required:
			s.headers = append(s.headers, value)
		}
	}
	for _, req := range asAnyList(op["security"]) {
		for name := range asMap(req) {
			scheme := asMap(schemes[name])
			if scheme["type"] == "apiKey" && scheme["in"] == "header" {
				s.keyHeader, _ = scheme["name"].(string)
			} else {
				s.bearer = true
			}
		}
	}
	if body := asMap(op["requestBody"]); body != nil {
		if mt := asMap(asMap(body["content"])["application/json"]); mt != nil {
			s.body = valueOf(asMap(mt["schema"]), "", comps, 0)
		}
	}
	for status, r := range asMap(op["responses"]) {
		if strings.HasPrefix(status, "2") && asMap(asMap(r)["content"])["text/event-stream"] != nil {
			s.stream = true
		}
	}
	return s
}

// valueOf is an example value of a schema: its example, its first enum
// value, an object of its required properties (those of its first oneOf or
// anyOf branch too) and of the optional ones that have an example, a list
// of one item, or a plain value of its type.
func valueOf(schema map[string]any, name string, comps map[string]any, depth int) any {
	if ref, ok := schema["$ref"].(string); ok {
		if depth > 8 {
			return map[string]any{}
		}
		return valueOf(asMap(comps[strings.TrimPrefix(ref, "#/components/schemas/")]), name, comps, depth+1)
	}
	if ex, ok := schema["example"]; ok {
		return ex
	}
	if enum := asAnyList(schema["enum"]); len(enum) > 0 {
		return enum[0]
	}
	if all := asAnyList(schema["allOf"]); len(all) > 0 {
		merged := map[string]any{}
		for _, part := range all {
			if m, ok := valueOf(asMap(part), name, comps, depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
		}
		return merged
	}
	props := asMap(schema["properties"])
	if schema["type"] == "object" || props != nil {
		if depth > 8 {
			return map[string]any{}
		}
		out := map[string]any{}
		want := map[string]bool{}
		for _, r := range asAnyList(schema["required"]) {
			want[r.(string)] = true
		}
		branchOnly := map[string]bool{}
		for _, key := range []string{"oneOf", "anyOf"} {
			for i, b := range asAnyList(schema[key]) {
				for _, r := range asAnyList(asMap(b)["required"]) {
					if i == 0 {
						want[r.(string)] = true
					} else {
						branchOnly[r.(string)] = true
					}
				}
			}
		}
		for prop, ps := range props {
			_, hasExample := asMap(ps)["example"]
			if want[prop] || (hasExample && !branchOnly[prop]) {
				out[prop] = valueOf(asMap(ps), prop, comps, depth+1)
			}
		}
		return out
	}
	switch schema["type"] {
	case "array":
		return []any{valueOf(asMap(schema["items"]), name, comps, depth+1)}
	case "integer":
		if min, ok := schema["minimum"]; ok && floatOf(min) > 0 {
			return int64(floatOf(min))
		}
		return 1
	case "number":
		return 1
	case "boolean":
		return true
	}
	if name != "" {
		return "my-" + strings.ToLower(name)
	}
	return "text"
}

func (s sample) url() string {
	p := s.path
	for _, pp := range s.pathParams {
		p = strings.ReplaceAll(p, "{"+pp.name+"}", fmt.Sprint(pp.value))
	}
	if len(s.query) > 0 {
		var q []string
		for _, kv := range s.query {
			q = append(q, kv.name+"="+fmt.Sprint(kv.value))
		}
		p += "?" + strings.Join(q, "&")
	}
	return p
}

// envName is the shell variable of a key header: X-Build-Key → BUILD_KEY.
func envName(header string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(header, "X-"), "-", "_"))
}

func (s sample) curl() string {
	lines := []string{"API=" + SampleBaseURL}
	cmd := "curl -sS"
	if s.stream {
		cmd += "N"
	}
	if s.method != http.MethodGet {
		cmd += " -X " + s.method
	}
	cmd += ` "$API` + s.url() + `"`
	parts := []string{cmd}
	if s.bearer {
		parts = append(parts, `-H "Authorization: Bearer $TOKEN"`)
	}
	if s.keyHeader != "" {
		parts = append(parts, `-H "`+s.keyHeader+`: $`+envName(s.keyHeader)+`"`)
	}
	for _, h := range s.headers {
		parts = append(parts, "-H "+shellQuote(h.name+": "+fmt.Sprint(h.value)))
	}
	if s.idempotency {
		parts = append(parts, `-H "Idempotency-Key: $(uuidgen)"`)
	}
	if s.body != nil {
		raw, _ := json.Marshal(s.body)
		parts = append(parts, `-H 'Content-Type: application/json'`, "-d "+shellQuote(string(raw)))
	}
	return strings.Join(lines, "\n") + "\n" + strings.Join(parts, " \\\n  ")
}

// shellQuote single-quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var identRe = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func (s sample) typescript(sdk string) string {
	var b strings.Builder
	imports := "createClient"
	if s.stream {
		imports += ", streamEvents"
	}
	fmt.Fprintf(&b, "import { %s } from %q;\n\n", imports, sdk)
	opts := fmt.Sprintf("baseUrl: %q", SampleBaseURL)
	if s.bearer {
		opts += ", token: process.env.TOKEN"
	}
	fmt.Fprintf(&b, "const api = createClient({ %s });\n", opts)
	if s.stream {
		// The stream is read with the SDK's reconnecting reader.
		fmt.Fprintf(&b, "for await (const message of streamEvents(api, %q)) {\n  console.log(message.type, message.event);\n}\n", s.url())
		return b.String()
	}
	var fields []string
	var params []string
	if len(s.pathParams) > 0 {
		params = append(params, "path: "+tsObject(s.pathParams))
	}
	if len(s.query) > 0 {
		params = append(params, "query: "+tsObject(s.query))
	}
	if len(s.headers) > 0 {
		params = append(params, "header: "+tsObject(s.headers))
	}
	if len(params) > 0 {
		fields = append(fields, "params: { "+strings.Join(params, ", ")+" }")
	}
	if s.keyHeader != "" {
		fields = append(fields, fmt.Sprintf("headers: { %q: process.env.%s ?? \"\" }", s.keyHeader, envName(s.keyHeader)))
	}
	if s.body != nil {
		fields = append(fields, "body: "+tsValue(s.body, "  "))
	}
	call := fmt.Sprintf("await api.%s(%q", s.method, s.path)
	if len(fields) > 0 {
		call += ", {\n  " + strings.Join(fields, ",\n  ") + ",\n}"
	}
	call += ")"
	fmt.Fprintf(&b, "const answer = %s;\nconsole.log(answer);\n", call)
	return b.String()
}

func tsObject(kv []param) string {
	parts := make([]string, len(kv))
	for i, e := range kv {
		parts[i] = tsKey(e.name) + ": " + tsValue(e.value, "")
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func tsKey(k string) string {
	if identRe.MatchString(k) {
		return k
	}
	raw, _ := json.Marshal(k)
	return string(raw)
}

// tsValue writes v as a TypeScript literal, objects one property a line.
func tsValue(v any, indent string) string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "{}"
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range keys {
			b.WriteString(indent + "  " + tsKey(k) + ": " + tsValue(x[k], indent+"  ") + ",\n")
		}
		b.WriteString(indent + "}")
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tsValue(e, indent)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}
