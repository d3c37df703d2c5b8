package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/fintech/platform/e2e/harness"
)

// TestDeclaredBoundsAreEnforced feeds every bound the served documents
// declare on a request field — maxLength, minLength, maximum, minimum,
// maxItems, minItems, enum, pattern, required — one step outside it and
// checks the 422 names that field; and, for the length and number bounds,
// exactly on it and checks no 422 names the field. The binder enforces the
// declared tags (gateway/bind/rules.go), so the document and the checks
// cannot drift. Operations behind a partner signature answer 401 before
// their body is read; they are counted and listed, not probed.
// ownerCheckedFirst are operations that look up the caller's resource before
// they read the body, so that another user's id answers 404 whatever the
// body holds (an answer that validated first would confirm the id exists).
var ownerCheckedFirst = map[string]bool{"PATCH /api/fiat/webhook-subs/{id}": true}

func TestDeclaredBoundsAreEnforced(t *testing.T) {
	p := shared(t)
	user := p.Register(t, "bounds")
	tokens := []string{user.Token}
	for _, email := range []string{harness.FiatAdminEmail, harness.GovAdminEmail, harness.CharityAdminEmail, harness.ReputationAdminEmail} {
		tokens = append(tokens, p.RegisterEmail(t, email).Token)
	}

	ops := declaredOperations(t, p)
	var probed, inside, unreachable, legacy400 int
	var resourceFirst []string
	var unreachableOps []string
	for _, op := range ops {
		for _, b := range op.bounds {
			token, resp := "", harness.Response{}
			for _, tok := range tokens {
				token = tok
				resp = p.Do(t, op.request(tok, b.field, b.outside, b.in))
				if !behindCredential(resp) {
					break
				}
			}
			if behindCredential(resp) {
				unreachable++
				unreachableOps = append(unreachableOps, op.method+" "+op.path)
				break // the whole operation is behind another credential
			}
			if resp.Status == http.StatusNotFound && strings.Contains(op.path, "{") && (b.in == "query" || ownerCheckedFirst[op.method+" "+op.path]) {
				// The resource is looked up before its page is read (gov's
				// ballots: an unknown proposal stays 404 whatever the cursor).
				resourceFirst = append(resourceFirst, op.method+" "+op.path+" "+b.field)
				continue
			}
			probed++
			if resp.Status == http.StatusBadRequest && namesField(resp, b.field) {
				legacy400++ // a route whose spec answers its field problems with 400
				continue
			}
			if resp.Status != http.StatusUnprocessableEntity || !namesField(resp, b.field) {
				t.Errorf("%s %s: %s %s = %s: got %d %s, want 422 naming %s",
					op.method, op.path, b.field, b.what, b.outside, resp.Status, resp.Body, b.field)
				continue
			}
			if b.inside == nil || op.stream {
				continue
			}
			inside++
			// On the bound the field may still be refused for what it says
			// (a URL, say), never for its length, size or range.
			if r := p.Do(t, op.request(token, b.field, b.inside, b.in)); r.Status == http.StatusUnprocessableEntity && refusedForBound(r, b.field) {
				t.Errorf("%s %s: %s = %s (on its %s) is refused: %s", op.method, op.path, b.field, b.inside, b.what, r.Body)
			}
		}
	}
	t.Logf("bounds: %d operations with declared request bounds; %d bounds probed outside (422 naming the field; %d of them 400 validation_failed where the spec says 400), %d on the bound (accepted); %d operations behind a partner credential: %v; read after the resource's lookup: %v",
		len(ops), probed, legacy400, inside, unreachable, slices.Compact(unreachableOps), resourceFirst)
	if probed < 100 {
		t.Fatalf("only %d bounds probed: the documents declare fewer bounds than expected", probed)
	}
}

// behindCredential reports an answer given before the body is read: no or
// the wrong credential (a partner key or a signature over the body).
func behindCredential(r harness.Response) bool {
	if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
		return true
	}
	var body struct {
		Error string `json:"error"`
	}
	return r.Status == http.StatusBadRequest && json.Unmarshal(r.Body, &body) == nil && body.Error == "signature_invalid"
}

// refusedForBound reports a 422 whose reason for field is a length, size
// or range.
func refusedForBound(r harness.Response, field string) bool {
	var body struct {
		Fields map[string]string `json:"fields"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return false
	}
	reason := body.Fields[field]
	return strings.Contains(reason, "at most") || strings.Contains(reason, "at least")
}

func namesField(r harness.Response, field string) bool {
	var body struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return false
	}
	_, ok := body.Fields[field]
	return ok
}

// bound is one declared limit of one field and a value just outside it
// (and, for length and number limits, one exactly on it).
type bound struct {
	field, what, in string // in: "body" or "query"
	outside, inside any
}

type declaredOp struct {
	method, path string
	bounds       []bound
	// stream: the operation answers text/event-stream, which an accepted
	// request keeps open, so only its refusals are probed.
	stream bool
}

// request builds a request of op whose field has value (the other fields
// left out; path parameters are fresh ids, which bind before any lookup).
func (op declaredOp) request(token, field string, value any, in string) harness.Request {
	path := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllStringFunc(op.path, func(string) string { return harness.NewID() })
	req := harness.Request{Method: op.method, Token: token}
	if in == "query" {
		path += "?" + url.Values{field: {fmt.Sprint(value)}}.Encode()
	} else {
		req.Body = map[string]any{field: value}
		if value == nil {
			req.Body = map[string]any{}
		}
	}
	req.Path = path
	return req
}

// declaredOperations reads every module slice the platform index lists and
// returns each operation (once per method and path) with its bounds.
func declaredOperations(t *testing.T, p *harness.Platform) []declaredOp {
	t.Helper()
	var index struct {
		Modules []struct {
			OpenAPI string `json:"openapi"`
		} `json:"modules"`
	}
	p.Get(t, "/api/platform/openapi.json", "").Decode(t, &index)
	seen := map[string]bool{}
	var out []declaredOp
	for _, m := range index.Modules {
		doc, err := openapi3.NewLoader().LoadFromData(p.Get(t, m.OpenAPI, "").Body)
		if err != nil {
			t.Fatalf("%s: %v", m.OpenAPI, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("%s: %v", m.OpenAPI, err)
		}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				key := method + " " + path
				if seen[key] {
					continue
				}
				seen[key] = true
				d := declaredOp{method: method, path: path}
				for _, r := range op.Responses.Map() {
					if r.Value != nil && r.Value.Content.Get("text/event-stream") != nil {
						d.stream = true
					}
				}
				for _, pr := range op.Parameters {
					if pr.Value != nil && pr.Value.In == "query" && pr.Value.Schema != nil {
						d.bounds = append(d.bounds, boundsOf(pr.Value.Name, "query", pr.Value.Schema.Value, false)...)
					}
				}
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
						s := mt.Schema.Value
						for name, prop := range s.Properties {
							d.bounds = append(d.bounds, boundsOf(name, "body", prop.Value, slices.Contains(s.Required, name))...)
						}
					}
				}
				if len(d.bounds) > 0 {
					out = append(out, d)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b declaredOp) int { return strings.Compare(a.method+a.path, b.method+b.path) })
	return out
}

// boundsOf lists the limits of one field's schema with values outside and
// on them. Formats are descriptions here (an id that names nothing is a
// 404, decisions.md), and the bounds of a value the field's own decoder
// checks (amounts) are probed too: they must name the field all the same.
func boundsOf(field, in string, s *openapi3.Schema, required bool) []bound {
	if s == nil || s.Format == "ksuid" || s.Pattern == "^[0-9A-Za-z]{27}$" {
		return nil // an id that names nothing is the resource's 404 (decisions.md), well-formed or not
	}
	var out []bound
	add := func(what string, outside, inside any) {
		out = append(out, bound{field: field, what: what, in: in, outside: outside, inside: inside})
	}
	free := len(s.Enum) == 0 && s.Pattern == "" && s.Format == ""
	onBound := func(v any) any {
		if free {
			return v
		}
		return nil
	}
	switch {
	case s.Type.Is("string"):
		if s.MaxLength != nil && *s.MaxLength < 100_000 {
			add("maxLength", strings.Repeat("a", int(*s.MaxLength)+1), onBound(strings.Repeat("a", int(*s.MaxLength))))
		}
		if s.MinLength > 1 {
			add("minLength", strings.Repeat("a", int(s.MinLength)-1), onBound(strings.Repeat("a", int(s.MinLength))))
		}
		if len(s.Enum) > 0 {
			add("enum", "not-one-of-the-values", nil)
		}
		if s.Pattern != "" {
			add("pattern", "\u00e9!", nil)
		}
	case s.Type.Is("integer"):
		if s.Max != nil {
			add("maximum", int64(*s.Max)+1, onBound(int64(*s.Max)))
		}
		if s.Min != nil {
			add("minimum", int64(*s.Min)-1, onBound(int64(*s.Min)))
		}
	case s.Type.Is("array"):
		item := any("a")
		if s.Items != nil && s.Items.Value != nil && s.Items.Value.Type.Is("object") {
			item = map[string]any{}
		}
		if s.MaxItems != nil && *s.MaxItems < 1000 {
			many := make([]any, *s.MaxItems+1)
			for i := range many {
				many[i] = item
			}
			add("maxItems", many, nil)
		}
		if s.MinItems > 0 {
			add("minItems", make([]any, s.MinItems-1), nil)
		}
	}
	if required && in == "body" {
		add("required", nil, nil)
	}
	return out
}
