package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Conformance: every request Platform.Do sends and every answer it gets is
// checked against the documents the platform serves — /api/openapi.json and
// every module slice /api/platform/openapi.json lists — with kin-openapi's
// openapi3filter. An undocumented status, response field or error code fails
// the test that caused it.
//
// What is checked:
//   - Every answer (any status) of an operation some document describes:
//     its status must be documented and its body must match the schema.
//     Response object schemas are read strictly: a field the document does
//     not declare is a mismatch (additionalProperties false is applied to
//     them here, except to Error, whose extra fields such as requestId are
//     open by design).
//   - The request, only when the answer is 2xx: tests send deliberately
//     invalid requests (hostile input, bad-input tables) and those are
//     refused with 4xx, so a request is held to the document only when the
//     API accepted it. A request the API accepts must be one the document
//     describes.
//
// Requests to paths no document describes (/api/auth, /api/platform, the
// webhooks module) are not checked; ConformanceStats counts them.

// The documents describe pages, feeds and scripts as strings of their media
// type; kin-openapi decodes only JSON, CSV and plain text by itself.
func init() {
	for _, ct := range []string{"text/html", "application/xml", "application/rss+xml", "text/javascript", "application/javascript"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// conformance is one platform's loaded documents.
type conformance struct {
	once sync.Once
	err  error
	docs []conformanceDoc
	// this platform's own counts (ConformanceStats adds up every
	// platform of the test process)
	requests, responses, failed atomic.Int64
}

type conformanceDoc struct {
	name   string
	router routers.Router
}

var (
	checkedRequests  atomic.Int64
	checkedResponses atomic.Int64
	uncheckedCalls   atomic.Int64
	mismatches       atomic.Int64
)

var (
	undocumentedMu sync.Mutex
	undocumented   = map[string]int{}
)

// ConformanceStats reports how many requests and responses were validated
// against the documents, how many calls no document describes, and how many
// mismatches were found.
func ConformanceStats() (requests, responses, undocumented, failed int64) {
	return checkedRequests.Load(), checkedResponses.Load(), uncheckedCalls.Load(), mismatches.Load()
}

// UndocumentedPrefixes counts the calls no document describes by the first
// two segments of their path (/api/auth, /api/platform, ...).
func UndocumentedPrefixes() map[string]int {
	undocumentedMu.Lock()
	defer undocumentedMu.Unlock()
	out := make(map[string]int, len(undocumented))
	for k, v := range undocumented {
		out[k] = v
	}
	return out
}

// Conformance reports how many requests and responses sent to this
// platform were validated against its documents, and how many mismatches
// were found (a test running beside others reads its own).
func (p *Platform) Conformance() (requests, responses, failed int64) {
	return p.conf.requests.Load(), p.conf.responses.Load(), p.conf.failed.Load()
}

// load fetches and parses the documents once per platform.
func (c *conformance) load(p *Platform) error {
	c.once.Do(func() {
		var index struct {
			Full    string `json:"full"`
			Modules []struct {
				Name    string `json:"name"`
				OpenAPI string `json:"openapi"`
			} `json:"modules"`
		}
		raw, err := p.fetch("/api/platform/openapi.json")
		if err == nil {
			err = json.Unmarshal(raw, &index)
		}
		if err != nil {
			c.err = fmt.Errorf("platform index: %w", err)
			return
		}
		paths := map[string]string{"full": "/api/openapi.json"}
		for _, m := range index.Modules {
			paths[m.Name] = m.OpenAPI
			// A module also served under the spec's proxy base (constitution,
			// planet) has a slice there too; its answers are checked as well.
			if mirror := proxyBase + m.OpenAPI; p.serves(mirror) {
				paths[m.Name+" (proxy)"] = mirror
			}
		}
		for _, path := range paths {
			raw, err := p.fetch(path)
			if err != nil {
				c.err = fmt.Errorf("%s: %w", path, err)
				return
			}
			loader := openapi3.NewLoader()
			doc, err := loader.LoadFromData(raw)
			if err != nil {
				c.err = fmt.Errorf("load %s: %w", path, err)
				return
			}
			if err := doc.Validate(context.Background()); err != nil {
				c.err = fmt.Errorf("%s is not a valid OpenAPI document: %w", path, err)
				return
			}
			strictResponses(doc)
			doc.Servers = openapi3.Servers{{URL: p.BaseURL}}
			router, err := gorillamux.NewRouter(doc)
			if err != nil {
				c.err = fmt.Errorf("router of %s: %w", path, err)
				return
			}
			c.docs = append(c.docs, conformanceDoc{name: path, router: router})
		}
	})
	return c.err
}

// proxyBase is the spec's proxy base some modules are also mounted under.
const proxyBase = "/api-backend"

// serves reports whether path answers 200.
func (p *Platform) serves(path string) bool {
	_, err := p.fetch(path)
	return err == nil
}

// fetch GETs a document without going through Do (and its checks).
func (p *Platform) fetch(path string) ([]byte, error) {
	resp, err := p.client.Get(p.BaseURL + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	return raw, nil
}

// strictResponses makes the object schemas the answers use reject fields
// they do not declare. Schemas that take part in an allOf stay open (each
// member of an allOf sees the fields of the others).
func strictResponses(doc *openapi3.T) {
	composed := map[*openapi3.Schema]bool{}
	visited := map[*openapi3.Schema]bool{}
	var mark func(ref *openapi3.SchemaRef)
	mark = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || visited[ref.Value] {
			return
		}
		s := ref.Value
		visited[s] = true
		for _, sub := range s.AllOf {
			if sub != nil && sub.Value != nil {
				composed[sub.Value] = true
			}
			mark(sub)
		}
		for _, p := range s.Properties {
			mark(p)
		}
		mark(s.Items)
		mark(s.AdditionalProperties.Schema)
		for _, sub := range append(append(openapi3.SchemaRefs{}, s.OneOf...), s.AnyOf...) {
			mark(sub)
		}
	}
	for _, sref := range doc.Components.Schemas { // Components is never nil after loading
		mark(sref)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, resp := range op.Responses.Map() {
				if resp.Value != nil {
					for _, mt := range resp.Value.Content {
						mark(mt.Schema)
					}
				}
			}
		}
	}
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef, inAllOf bool)
	walk = func(ref *openapi3.SchemaRef, inAllOf bool) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if ref.Ref == "#/components/schemas/Error" || inAllOf || composed[s] {
			return
		}
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			no := false
			s.AdditionalProperties.Has = &no
		}
		for _, p := range s.Properties {
			walk(p, false)
		}
		walk(s.Items, false)
		walk(s.AdditionalProperties.Schema, false)
		for _, sub := range s.OneOf {
			walk(sub, false)
		}
		for _, sub := range s.AnyOf {
			walk(sub, false)
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for _, mt := range resp.Value.Content {
					walk(mt.Schema, false)
				}
			}
		}
	}
}

// check validates one exchange against every document that describes its
// operation.
func (p *Platform) check(t testing.TB, req Request, sent []byte, resp Response) {
	t.Helper()
	if err := p.conf.load(p); err != nil {
		t.Fatalf("conformance: %v", err)
	}
	hreq, err := http.NewRequest(req.Method, p.BaseURL+req.Path, bytes.NewReader(sent))
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	if req.Body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if req.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+req.Token)
	}
	for k, v := range req.Headers {
		if v == "" {
			hreq.Header.Del(k)
			continue
		}
		hreq.Header.Set(k, v)
	}
	described := false
	for _, d := range p.conf.docs {
		route, params, err := d.router.FindRoute(hreq)
		if err != nil {
			continue // not this document's operation
		}
		described = true
		opts := &openapi3filter.Options{
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
			IncludeResponseStatus: true,
			MultiError:            true,
		}
		in := &openapi3filter.RequestValidationInput{Request: hreq, PathParams: params, Route: route, Options: opts}
		if resp.Status >= 200 && resp.Status < 300 {
			hreq.Body = io.NopCloser(bytes.NewReader(sent))
			checkedRequests.Add(1)
			p.conf.requests.Add(1)
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				p.mismatch(t, "request", d.name, req, resp, err)
			}
		}
		checkedResponses.Add(1)
		p.conf.responses.Add(1)
		err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.Status, Header: resp.Header,
			Body: io.NopCloser(bytes.NewReader(resp.Body)), Options: opts,
		})
		if err != nil {
			p.mismatch(t, "response", d.name, req, resp, err)
		}
	}
	if !described {
		uncheckedCalls.Add(1)
		parts := strings.SplitN(strings.SplitN(req.Path, "?", 2)[0], "/", 4)
		if len(parts) > 3 {
			parts = parts[:3]
		}
		undocumentedMu.Lock()
		undocumented[strings.Join(parts, "/")]++
		undocumentedMu.Unlock()
	}
}

// mismatch fails the test and, with CONFORMANCE_LOG set, appends the
// mismatch to that file (to collect every mismatch of a suite run).
func (p *Platform) mismatch(t testing.TB, what, doc string, req Request, resp Response, err error) {
	t.Helper()
	mismatches.Add(1)
	p.conf.failed.Add(1)
	body := string(resp.Body)
	if len(body) > 600 {
		body = body[:600] + "…"
	}
	msg := fmt.Sprintf("conformance: %s of %s %s (status %d) does not match %s: %v\nbody: %s",
		what, req.Method, req.Path, resp.Status, doc, strings.TrimSpace(err.Error()), body)
	if f := os.Getenv("CONFORMANCE_LOG"); f != "" {
		if fh, ferr := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); ferr == nil {
			fmt.Fprintf(fh, "%s\n----\n", msg)
			fh.Close()
		}
	}
	t.Errorf("%s", msg)
}
