package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

// fuzzModule sends every route of a module's OpenAPI slice malformed and
// hostile input, anonymously and as a plain user: never a 5xx. It also
// checks that the platform index lists the slice.
func fuzzModule(t *testing.T, name string) {
	p := shared(t)
	u := p.Register(t, "fuzz-"+name)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	slice := "/api/" + name + "/openapi.json"
	r := p.Get(t, slice, "")
	if r.Status != http.StatusOK {
		t.Fatalf("%s: %d", slice, r.Status)
	}
	r.Decode(t, &doc)
	if len(doc.Paths) < 5 {
		t.Fatalf("only %d paths in %s", len(doc.Paths), slice)
	}
	if idx := p.Get(t, "/api/platform/openapi.json", ""); !strings.Contains(string(idx.Body), slice) {
		t.Fatalf("the platform index does not list %s", slice)
	}
	bodies := []any{
		[]byte(`not json`), []byte(`[]`), []byte(`{}`), []byte(`null`), []byte(`"x"`), []byte(`{"payload":null}`),
		[]byte("{\"accountId\":\"\xff\",\"amount\":1}"), []byte(`{"accountId":"a\u0000","amount":1e309}`),
		[]byte(`{"payload":{"a":1e400},"signature":"` + strings.Repeat("A", 5000) + `"}`),
		[]byte(`{"payload":{"a":"\ud800"},"signature":"x.` + strings.Repeat("_", 86) + `"}`),
		map[string]any{"amount": "10", "accountId": 5, "from": []int{1}, "to": map[string]any{}},
		map[string]any{"amount": -0.5, "accountId": strings.Repeat("x", 5000), "from": "a", "to": "b", "payload": []any{1}},
		map[string]any{"amount": 99999999999999999999.5, "from": "../../etc", "to": "%00", "payload": map[string]any{"k": strings.Repeat("v", 100000)}},
	}
	ids := []string{"nope", "00000000000000000000000000", "%27%3B--", strings.Repeat("9", 300), "%00", "%ff"}
	sent := 0
	for path, methods := range doc.Paths {
		for method := range methods {
			method = strings.ToUpper(method)
			for _, id := range ids {
				concrete := fillParams(path, id)
				for _, token := range []string{"", u.Token} {
					if method == http.MethodGet {
						for _, q := range []string{"?limit=-1&cursor=%25%25", "?limit=abc&cursor=AAAA", "?cursor=JSUl&email=%00", "?email=%ff&limit=999999"} {
							check(t, p, harness.Request{Method: method, Path: concrete + q, Token: token})
							sent++
						}
						continue
					}
					for _, b := range bodies {
						check(t, p, harness.Request{Method: method, Path: concrete, Token: token, Body: b,
							Headers: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)}})
						check(t, p, harness.Request{Method: method, Path: concrete, Token: token, Body: b})
						sent += 2
					}
				}
			}
		}
	}
	t.Logf("%d requests to %d paths", sent, len(doc.Paths))
}

func TestTradeNoServerErrors(t *testing.T) { fuzzModule(t, "trade") }
