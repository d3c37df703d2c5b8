package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestNoServerErrorsForHostileInput sends every registered route — the
// slices of every module in the platform index, the identity and platform
// routes, the public pages and the metrics listener — malformed and hostile
// input as anonymous, user and admin callers, on existing resources and
// unknown ids: NUL bytes and invalid UTF-8 in bodies, queries and paths,
// wrong and missing content types, oversize bodies. A client can make the
// platform refuse, never fail. No identical request is sent twice.
func TestNoServerErrorsForHostileInput(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "hostile")
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	repAdmin := p.RegisterEmail(t, harness.ReputationAdminEmail)
	wallet := fiatCreateWallet(t, p, u, "KZT")
	entry := p.Post(t, "/api/ledger/entries", u.Token, map[string]any{"kind": "note:hostile", "sourceId": u.ID}).JSON(t)["id"]

	routes := registeredRoutes(t, p)
	if len(routes) < 150 {
		t.Fatalf("only %d routes found", len(routes))
	}
	// Existing resources (the caller's wallet, a user, a ledger entry) as
	// well as ids that name nothing, and ids carrying NUL or invalid UTF-8.
	ids := []string{wallet, u.ID, fmt.Sprint(entry), "nope", "2ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "%27%3B--", strings.Repeat("9", 300), "%00", "%ff%fe"}
	tokens := []string{"", u.Token, admin.Token, repAdmin.Token}
	queries := []string{"", "?limit=-1&cursor=%25%25&since=yesterday", "?cursor=AA&maskId=%00&offset=-5", "?kind=%ff&limit=99999999999999999999&city=%00"}
	bodies := []hostileBody{
		{raw: []byte(`not json`)}, {raw: []byte(`[]`)}, {raw: []byte(`{}`)}, {raw: []byte(`null`)},
		{raw: []byte(`{"a":{"b":{"c":{"d":{"e":[[[[[[[[[[{}]]]]]]]]]]}}}}}`)},
		{json: map[string]any{"amount": "10", "amountKzt": -1, "walletId": 5, "currency": "EUR", "maskId": []int{1}}},
		{json: map[string]any{"amount": 1.5, "amountKzt": 1e300, "fromWalletId": strings.Repeat("x", 5000), "toEmail": "a@b.co",
			"email": "x@example.com", "password": strings.Repeat("p", 200), "url": "javascript:alert(1)", "secret": "s"}},
		{json: map[string]any{"memo": "a\u0000b", "name": "x\u0000", "title": "\u0000", "walletId": wallet, "amount": 100}},
		{raw: []byte("{\"description\":\"\xff\xfe\",\"title\":\"ok\",\"walletId\":\"" + wallet + "\"}")},
		{raw: []byte(`{"walletId":"` + wallet + `","amount":100}`), contentType: "text/plain"},
		{raw: []byte(`{"walletId":"` + wallet + `","amount":100}`), contentType: "-"},
	}
	headers := map[string]string{"X-API-Key": "mk_live_bogus", "Stripe-Signature": "t=1,v1=00",
		"X-Reputation-Service-Key": "wrong", "X-Build-Key": "qb_pk_bogus", "X-Platform-Signature": "sha256=00",
		"X-Platform-Timestamp": "1"}

	seen := map[string]bool{}
	send := func(req harness.Request) {
		key := fmt.Sprintf("%s %s %s %v %v", req.Method, req.Path, req.Token, req.Body, req.Headers)
		if seen[key] {
			return
		}
		seen[key] = true
		if r := p.Do(t, req); r.Status >= 500 {
			t.Errorf("%s %s (token %v): %d %.300s", req.Method, req.Path, req.Token != "", r.Status, r.Body)
		}
	}
	for _, rt := range routes {
		paths := []string{rt.path}
		if strings.Contains(rt.path, "{") {
			paths = paths[:0]
			for _, id := range ids {
				paths = append(paths, fillParams(rt.path, id))
			}
		}
		callers := tokens
		if strings.HasSuffix(rt.path, "/admin/events") {
			// An admin's stream never ends; its admin requests are covered
			// by the webhook stream tests.
			callers = tokens[:2]
		}
		if strings.HasSuffix(rt.path, "/me/events/stream") {
			// A signed-in caller's stream never ends either: the anonymous
			// request here, the rest in TestWebhooksListenForwards.
			callers = tokens[:1]
		}
		for i, path := range paths {
			for _, token := range callers {
				if rt.method == http.MethodGet || rt.method == http.MethodDelete {
					for _, q := range queries {
						send(harness.Request{Method: rt.method, Path: path + q, Token: token, Headers: headers})
					}
					continue
				}
				for j, b := range bodies {
					// Every body for one id; the first two for the others.
					if i > 0 && j > 1 {
						break
					}
					h := map[string]string{}
					for k, v := range headers {
						h[k] = v
					}
					switch b.contentType {
					case "":
					case "-":
						h["Content-Type"] = ""
					default:
						h["Content-Type"] = b.contentType
					}
					var body any = b.raw
					if b.json != nil {
						body = b.json
					}
					send(harness.Request{Method: rt.method, Path: path, Token: token, Body: body, Headers: h})
				}
			}
		}
		if rt.method != http.MethodGet {
			// Over the 1 MiB limit, once per route: the answer comes on the
			// announced length alone, before the body is sent.
			status, _, body := announceBody(t, p.BaseURL, rt.method, paths[0], u.Token, 1<<20+1)
			seen["oversize "+rt.method+" "+paths[0]] = true
			if status != http.StatusBadRequest || !strings.Contains(body, "payload_too_large") {
				t.Errorf("oversize %s %s: %d %.200s", rt.method, paths[0], status, body)
			}
		}
	}
	// The metrics listener refuses what it does not serve.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		for _, path := range []string{"/metrics", "/metrics?x=%00", "/", "/debug/pprof/"} {
			req, _ := http.NewRequest(m, "http://"+p.MetricsAddr+path, strings.NewReader("\x00\xff"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("metrics listener: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				t.Errorf("metrics %s %s: %d", m, path, resp.StatusCode)
			}
			seen["metrics "+m+" "+path] = true
		}
	}
	t.Logf("%d distinct hostile requests to %d routes, none answered 5xx", len(seen), len(routes))
}

type hostileBody struct {
	raw         []byte
	json        map[string]any
	contentType string // "-" sends none
}

type route struct{ method, path string }

// registeredRoutes lists every route the platform serves: the paths of each
// module slice in /api/platform/openapi.json, the identity and platform
// routes, the constitution mirror under /api-backend, and the public pages.
func registeredRoutes(t *testing.T, p *harness.Platform) []route {
	t.Helper()
	var index struct {
		Modules []struct {
			OpenAPI string `json:"openapi"`
		} `json:"modules"`
	}
	p.Get(t, "/api/platform/openapi.json", "").Decode(t, &index)
	set := map[route]bool{}
	for _, m := range index.Modules {
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		p.Get(t, m.OpenAPI, "").Decode(t, &doc)
		for path, ops := range doc.Paths {
			for method := range ops {
				set[route{strings.ToUpper(method), path}] = true
				if strings.HasPrefix(path, "/api/constitution/") || strings.HasPrefix(path, "/api/planet/") {
					set[route{strings.ToUpper(method), "/api-backend" + path}] = true
				}
			}
		}
	}
	for _, r := range []route{
		{"POST", "/api/auth/register"}, {"POST", "/api/auth/login"}, {"GET", "/api/auth/me"},
		{"POST", "/api/auth/verify-email"}, {"GET", "/api/auth/verify-email"}, {"GET", "/api/auth/health"},
		{"GET", "/api/platform/version"}, {"GET", "/api/platform/health"}, {"GET", "/api/platform/openapi.json"},
		{"GET", "/api/openapi.json"}, {"GET", "/sitemap.xml"}, {"GET", "/build/vacancies"},
		{"GET", "/build/vacancies/{id}"}, {"GET", "/build/projects/{id}"}, {"GET", "/build/employers/{id}"},
		{"GET", "/api/no/such/route"}, {"PUT", "/api/fiat/wallets"},
	} {
		set[r] = true
	}
	out := make([]route, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

func fillParams(path, id string) string {
	parts := strings.Split(path, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, "{") {
			parts[i] = id
		}
	}
	return strings.Join(parts, "/")
}

// check fails the test on a 5xx answer to req.
func check(t *testing.T, p *harness.Platform, req harness.Request) {
	t.Helper()
	if r := p.Do(t, req); r.Status >= 500 {
		t.Errorf("%s %s (token %v): %d %s", req.Method, req.Path, req.Token != "", r.Status, r.Body)
	}
}

// announceBody sends the request line and headers announcing a JSON body of
// length bytes, and reads the answer without sending the body.
func announceBody(t *testing.T, base, method, path, token string, length int) (int, http.Header, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n",
		method, path, u.Host, auth, length)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer to %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
