package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/swaggest/jsonschema-go"
	swag "github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi3"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/server"
)

// reflector turns the typed declarations of routes (server.Op) into OpenAPI
// operations and component schemas with swaggest/openapi-go, which reads
// the Go types and their tags: json names, `required`, `enum`, `minimum`,
// `maximum`, `maxLength`, `pattern`, `format`, `description`, and
// `path`/`query`/`header` parameters. `format:"ksuid"` marks an id the
// platform minted and becomes the KSUID schema.
type reflector struct {
	r *openapi3.Reflector
}

// reflected is one declared operation reflected once (server.Declaration
// keeps it): its operation object and the component schemas it uses, as
// JSON so each document gets its own copy to finish.
type reflected struct {
	op, components []byte
	err            error
}

// reflectRoute merges the reflection of r's declaration into op and returns
// the component schemas it uses.
func reflectRoute(r server.Route, path string) (map[string]any, map[string]any, error) {
	memo := r.Decl.Memo(func() any {
		x := newReflector()
		op := map[string]any{}
		if err := x.operation(r, path, op); err != nil {
			return reflected{err: err}
		}
		comps, err := x.components()
		if err != nil {
			return reflected{err: err}
		}
		var out reflected
		out.op, out.err = json.Marshal(op)
		if out.err == nil {
			out.components, out.err = json.Marshal(comps)
		}
		return out
	}).(reflected)
	if memo.err != nil {
		return nil, nil, memo.err
	}
	var op, comps map[string]any
	if err := json.Unmarshal(memo.op, &op); err != nil {
		return nil, nil, fmt.Errorf("copying reflected operation: %w", err)
	}
	if err := json.Unmarshal(memo.components, &comps); err != nil {
		return nil, nil, fmt.Errorf("copying reflected schemas: %w", err)
	}
	return op, comps, nil
}

func newReflector() *reflector {
	r := openapi3.NewReflector()
	r.Spec.Openapi = "3.0.3"
	r.DefaultOptions = append(r.DefaultOptions, jsonschema.InterceptDefName(defName))
	// A json.Number is encoded as the number it holds, not as a string.
	r.AddTypeMapping(json.Number(""), float64(0))
	return &reflector{r: r}
}

// defName names a component after its Go type: createMaskRequest →
// CreateMaskRequest, schemas.Page[schemas.Mask] → MaskPage.
func defName(t reflect.Type, _ string) string {
	name := t.Name()
	base, args, generic := strings.Cut(name, "[")
	if !generic {
		return upperFirst(name)
	}
	var b strings.Builder
	for _, a := range strings.Split(strings.TrimSuffix(args, "]"), ",") {
		b.WriteString(upperFirst(a[strings.LastIndex(a, ".")+1:]))
	}
	return b.String() + upperFirst(base)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// operation reflects the declaration of r into op (built by Build with the
// path parameters and security) and returns an error when a declared type
// cannot be described.
func (x *reflector) operation(r server.Route, path string, op map[string]any) error {
	d := r.Decl
	oc, err := x.r.NewOperationContext(r.Method, path)
	if err != nil {
		return fmt.Errorf("declaring %s %s: %w", r.Method, r.Path, err)
	}
	if d.Request != nil {
		oc.AddReqStructure(d.Request)
	}
	for _, resp := range d.Responses {
		if resp.Error {
			continue
		}
		opts := []swag.ContentOption{swag.WithHTTPStatus(resp.Status), func(cu *swag.ContentUnit) { cu.Description = resp.Description }}
		if resp.ContentType != "" {
			opts = append(opts, swag.WithContentType(resp.ContentType))
			if binaryMedia(resp.ContentType) {
				opts = append(opts, func(cu *swag.ContentUnit) { cu.Format = "binary" })
			}
		}
		oc.AddRespStructure(resp.Body, opts...)
	}
	if err := x.r.AddOperation(oc); err != nil {
		return fmt.Errorf("reflecting %s %s: %w", r.Method, r.Path, err)
	}
	item := x.r.Spec.Paths.MapOfPathItemValues[path]
	reflected, ok := item.MapOfOperationValues[strings.ToLower(r.Method)]
	if !ok {
		return fmt.Errorf("reflecting %s %s: no operation", r.Method, r.Path)
	}
	var got map[string]any
	if err := roundTrip(reflected, &got); err != nil {
		return err
	}
	op["parameters"] = mergeParams(asAnyList(op["parameters"]), asAnyList(got["parameters"]))
	if len(asAnyList(op["parameters"])) == 0 {
		delete(op, "parameters")
	}
	delete(op, "requestBody")
	if body, ok := got["requestBody"].(map[string]any); ok {
		_, optional := d.Request.(bind.OptionalBody)
		body["required"] = !optional
		body["description"] = IgnoredFields
		op["requestBody"] = body
	}
	responses := map[string]any{}
	if rs, ok := got["responses"].(map[string]any); ok {
		for status, v := range rs {
			responses[status] = v
		}
	}
	for _, resp := range d.Responses {
		status := strconv.Itoa(resp.Status)
		switch {
		case resp.Error:
			answer := ErrorAnswer(resp.Description)
			if page, ok := responses[status].(map[string]any); ok {
				// A page of the same status (Accept: text/html) is the
				// other media type of this answer.
				content := answer["content"].(map[string]any)
				pc, _ := page["content"].(map[string]any)
				for mt, v := range pc {
					if _, set := content[mt]; !set {
						content[mt] = v
					}
				}
			}
			responses[status] = answer
		case resp.Body == nil && resp.ContentType == "":
			responses[status] = map[string]any{"description": resp.Description}
		}
	}
	if d.Role != "" {
		op["x-required-role"] = d.Role
		if _, ok := responses["403"]; !ok {
			responses["403"] = ErrorAnswer("forbidden or mfa_required: the caller is not a " + d.Role +
				" (forbidden), or in production an admin who has not turned on two-factor (mfa_required)")
		}
	}
	op["responses"] = responses
	switch {
	case d.APIKey != "":
		op["security"] = []any{map[string]any{APIKeyScheme(d.APIKey): []string{}}}
	case d.Public:
		op["security"] = []any{}
	}
	return nil
}

// binaryMedia reports whether a media type is bytes rather than text (a
// PDF, an image): its schema is a string of format binary.
func binaryMedia(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	return !strings.HasPrefix(mt, "text/") && !strings.HasSuffix(mt, "json") && !strings.HasSuffix(mt, "xml") &&
		mt != "application/javascript"
}

// components returns the component schemas reflected so far, with the
// KSUID format expanded and schemas that are not objects (amounts, limits)
// inlined where they are referenced.
func (x *reflector) components() (map[string]any, error) {
	out := map[string]any{}
	if x.r.Spec.Components == nil || x.r.Spec.Components.Schemas == nil {
		return out, nil
	}
	if err := roundTrip(x.r.Spec.Components.Schemas.MapOfSchemaOrRefValues, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// finishReflected expands formats and inlines scalar components in the
// whole document (paths and components), once every operation is in.
func finishReflected(paths map[string]any, schemas map[string]any) {
	inline := map[string]any{}
	for name, s := range schemas {
		m, _ := s.(map[string]any)
		if m != nil && m["type"] != nil && m["type"] != "object" && m["type"] != "array" {
			inline["#/components/schemas/"+name] = m
		}
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && inline[ref] != nil {
				return walk(copyMap(inline[ref].(map[string]any)))
			}
			if x["format"] == "ksuid" {
				out := copyMap(KSUID)
				if d, ok := x["description"].(string); ok {
					out["description"] = d + " (" + KSUID["description"].(string) + ")"
				}
				if x["nullable"] == true {
					out["nullable"] = true
				}
				return out
			}
			for k, e := range x {
				x[k] = walk(e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
			return x
		}
		return v
	}
	for k, v := range paths {
		paths[k] = walk(v)
	}
	for ref := range inline {
		delete(schemas, strings.TrimPrefix(ref, "#/components/schemas/"))
	}
	for k, v := range schemas {
		schemas[k] = walk(v)
	}
}

// mergeParams overlays the reflected parameters on the generated ones (same
// name and location), keeping the generated schema of path parameters.
func mergeParams(base, reflected []any) []any {
	index := map[string]int{}
	for i, p := range base {
		m := p.(map[string]any)
		index[m["in"].(string)+" "+m["name"].(string)] = i
	}
	for _, p := range reflected {
		m := p.(map[string]any)
		key := m["in"].(string) + " " + m["name"].(string)
		i, ok := index[key]
		switch {
		case !ok:
			base = append(base, m)
		case m["in"] == "path":
			if d, ok := m["description"]; ok {
				base[i].(map[string]any)["description"] = d
			}
		default:
			base[i] = m
		}
	}
	return base
}

func roundTrip(in any, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding reflected schema: %w", err)
	}
	return json.Unmarshal(raw, out)
}

// overlay puts the reflected parts of a declared operation on the one Build
// generated from the route (path parameters, Idempotency-Key, security).
func overlay(op, declared map[string]any) {
	params := mergeParams(asAnyList(op["parameters"]), asAnyList(declared["parameters"]))
	if len(params) > 0 {
		op["parameters"] = params
	}
	delete(op, "requestBody")
	for _, k := range []string{"requestBody", "responses", "security", "x-required-role"} {
		if v, ok := declared[k]; ok {
			op[k] = v
		}
	}
}
