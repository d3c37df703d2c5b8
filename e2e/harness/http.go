package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object (status %d): %s", r.Status, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode response (status %d): %v: %s", r.Status, err, r.Body)
	}
}

// Request is an HTTP request to the platform.
type Request struct {
	Method string
	Path   string
	Token  string
	Body   any // marshalled to JSON unless []byte or string
	// Headers are set on the request; an empty value removes the header.
	Headers map[string]string
}

// Do sends req and returns the answer; transport errors fail the test.
func (p *Platform) Do(t testing.TB, req Request) Response {
	t.Helper()
	var sent []byte
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		sent = b
	case string:
		sent = []byte(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode request: %v", err)
		}
		sent = raw
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(sent)
	}
	hreq, err := http.NewRequest(req.Method, p.BaseURL+req.Path, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if req.Body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if req.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+req.Token)
	}
	for k, v := range req.Headers {
		if v == "" {
			hreq.Header.Del(k) // an empty value sends no such header
			continue
		}
		hreq.Header.Set(k, v)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", req.Method, req.Path, err)
	}
	out := Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	p.check(t, req, sent, out)
	return out
}

// Get is a GET with an optional token.
func (p *Platform) Get(t testing.TB, path, token string) Response {
	t.Helper()
	return p.Do(t, Request{Method: http.MethodGet, Path: path, Token: token})
}

// Post is a JSON POST with an optional token.
func (p *Platform) Post(t testing.TB, path, token string, body any) Response {
	t.Helper()
	return p.Do(t, Request{Method: http.MethodPost, Path: path, Token: token, Body: body})
}
