package e2e

import (
	"bufio"
	"context"
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

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestNoServerErrorsForHostileInput sends every registered route — the
// slices of every module in the platform index, the identity and platform
// routes, the public pages and the metrics listener — malformed and hostile
// input as anonymous, user and every admin caller (fiat, gov, charity,
// reputation), on a real resource of the route's module, on a real id of
// another kind and on ids that name nothing: NUL bytes and invalid UTF-8 in
// bodies, queries and paths, wrong and missing content types, oversize
// bodies. The platform runs with its rate limiters on (sized above the
// walk's own traffic), and every answer carries their headers. A client can
// make the platform refuse, never fail. No identical request is sent twice.
func TestNoServerErrorsForHostileInput(t *testing.T) {
	t.Parallel()             // a long test: see "Parallel tests" in main_test.go
	const budget = "1000000" // per minute: on, and never reached by the walk
	p := harness.Start(t, harness.Options{Env: map[string]string{"RATE_LIMIT_READ": budget, "RATE_LIMIT_WRITE": budget,
		"RATE_LIMIT_AUTH": budget, "RATE_LIMIT_MONEY": budget, "RATE_LIMIT_PARTNER": budget}})
	u, real := hostileResources(t, p)
	admins := []harness.User{p.RegisterEmail(t, harness.FiatAdminEmail), p.RegisterEmail(t, harness.GovAdminEmail),
		p.RegisterEmail(t, harness.CharityAdminEmail), p.RegisterEmail(t, harness.ReputationAdminEmail)}
	wallet := real["wallets"][0]

	routes := registeredRoutes(t, p)
	if len(routes) < 150 {
		t.Fatalf("only %d routes found", len(routes))
	}
	// After the route's own real resources: a real id of another kind, ids
	// that name nothing, and ids carrying NUL or invalid UTF-8.
	others := append([]string{u.ID}, hostileIDs...)
	tokens := []string{"", u.Token}
	for _, a := range admins {
		tokens = append(tokens, a.Token)
	}
	queries, bodies, headers := hostileQueries, hostileBodies(wallet), hostileHeaders
	seen := map[string]bool{}
	send := func(req harness.Request) {
		key := fmt.Sprintf("%s %s %s %v %v", req.Method, req.Path, req.Token, req.Body, req.Headers)
		if seen[key] {
			return
		}
		seen[key] = true
		r := p.Do(t, req)
		if r.Status >= 500 {
			t.Errorf("%s %s (token %v): %d %.300s", req.Method, req.Path, req.Token != "", r.Status, r.Body)
		}
		if r.Header.Get("RateLimit-Limit") == "" || r.Header.Get("RateLimit-Remaining") == "" {
			t.Errorf("%s %s: %d without the rate-limit headers", req.Method, req.Path, r.Status)
		}
	}
	for _, rt := range routes {
		paths := []string{rt.path}
		if strings.Contains(rt.path, "{") {
			own := real[paramKind(rt.path)]
			if len(own) == 0 {
				t.Errorf("%s %s: no real resource of its kind (%q) in the walk", rt.method, rt.path, paramKind(rt.path))
			}
			paths = paths[:0]
			for _, id := range append(append([]string{}, own...), others...) {
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
					send(b.request(rt.method, path, token, headers))
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

// paramKind names the resource a path parameter stands for: the segment
// before the first parameter ("wallets" in /api/fiat/wallets/{id}/public).
func paramKind(path string) string {
	parts := strings.Split(path, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, "{") && i > 0 {
			return parts[i-1]
		}
	}
	return ""
}

// hostileResources creates, as one user, a real resource of every kind a
// path parameter names, keyed by paramKind: wallets, deposits, checkout
// sessions, KYC submissions, payouts, merchant keys and authorizations,
// merchant charges, payment requests, masks, ledger entries, signing keys, proposals,
// campaigns, artifacts, projects, vacancies, employers, partner keys, a
// parked DLQ record, a webhook endpoint and a delivery of it (and a guide).
func hostileResources(t *testing.T, p *harness.Platform) (harness.User, map[string][]string) {
	t.Helper()
	u, merchant := p.Register(t, "hostile"), p.Register(t, "hostile-merchant")
	created := func(r harness.Response, field string) string {
		t.Helper()
		if r.Status != http.StatusCreated {
			t.Fatalf("setup: %d %s", r.Status, r.Body)
		}
		return fmt.Sprint(r.JSON(t)[field])
	}
	wallet := fiatCreateWallet(t, p, u, "KZT")
	deposit := fiatDeposit(t, p, fiatSecret(t, p), u, wallet, 100_000)
	pending := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": wallet, "amount": 500})
	session := created(pending, "url")
	session = session[strings.LastIndex(session, "/")+1:]
	mk := p.Post(t, "/api/fiat/merchant/keys", merchant.Token, map[string]string{"label": "hostile"})
	mkey, apiKey := created(mk, "id"), fmt.Sprint(mk.JSON(t)["key"])
	auth := created(p.Post(t, "/api/fiat/merchant/authorizations", u.Token,
		map[string]any{"walletId": wallet, "merchantKeyId": mkey, "maxAmount": 5_000}), "id")
	charge := created(commerceCharge(t, p, apiKey, map[string]any{"walletId": wallet, "amount": 1_000, "paymentRef": "hostile-1",
		"description": "hostile"}), "chargeId")
	sign := signPayload(t, p, u.Token, `{"hostile":true}`)
	keyID, _, _ := strings.Cut(sign.Signature, ".")
	project := buildProject(t, p, u, "hostile")
	parked := hostileParkedRecord(t, p)
	sub := created(p.Post(t, "/api/fiat/webhook-subs", u.Token, map[string]any{"password": u.Password, "url": "http://127.0.0.1:9/hostile",
		"secret": "hostile-secret-0123456789"}), "id")
	test := p.Post(t, "/api/fiat/webhook-subs/"+sub+"/test", u.Token, map[string]any{})
	if test.Status != http.StatusAccepted {
		t.Fatalf("setup: test delivery: %d %s", test.Status, test.Body)
	}
	delivery := fmt.Sprint(test.JSON(t)["id"])
	partnerKey, _ := buildKey(t, p, u)
	apiKey2 := created(p.Post(t, "/api/auth/api-keys", u.Token, map[string]any{"password": u.Password, "name": "hostile", "scopes": []string{"fiat:read"}}), "id")
	// A second login session of the caller's, so that ending it leaves the
	// walk's own token live.
	if r := p.Post(t, "/api/auth/login", "", map[string]string{"email": u.Email, "password": u.Password}); r.Status != http.StatusOK {
		t.Fatalf("setup: second login: %d %s", r.Status, r.Body)
	}
	var sessions struct {
		Items []struct {
			ID      string `json:"id"`
			Current bool   `json:"current"`
		} `json:"items"`
	}
	p.Get(t, "/api/auth/sessions", u.Token).Decode(t, &sessions)
	var otherSession string
	for _, s := range sessions.Items {
		if !s.Current {
			otherSession = s.ID
		}
	}
	if otherSession == "" {
		t.Fatalf("setup: no second session in %+v", sessions)
	}
	return u, map[string][]string{
		"api-keys": {apiKey2},
		"sessions": {otherSession},
		"wallets":  {wallet},
		"deposits": {deposit, created(pending, "depositId")},
		"checkout": {session},
		"kyc": {created(p.Post(t, "/api/fiat/kyc/submit", u.Token, map[string]string{"fullName": "H U", "documentType": "passport",
			"documentNumber": "H-1", "country": "KZ"}), "id")},
		"payouts": {created(p.Post(t, "/api/fiat/payouts", u.Token, map[string]any{"walletId": wallet, "amount": 1_000,
			"bankAccount": "KZ86125KZT5004100100"}), "id")},
		"keys":           {mkey, keyID},
		"authorizations": {auth},
		"charges":        {charge},
		"requests": {created(p.Post(t, "/api/fiat/requests", u.Token, map[string]any{"walletId": wallet, "amount": 700,
			"description": "hostile"}), "token")},
		"masks":   {createMask(t, p, u.Token, map[string]any{"label": "hostile", "kind": "recurring", "spendLimitCents": 100}).ID},
		"entries": {created(p.Post(t, "/api/ledger/entries", u.Token, map[string]any{"kind": "note:hostile", "sourceId": u.ID}), "id")},
		"rank":    {u.ID},
		"proposals": {govCreate(t, p, u.Token, map[string]any{"title": "Hostile", "summary": "s", "body": "b", "category": "c",
			"voteMode": "yes-no-abstain"}).ID},
		"campaigns": {created(p.Post(t, "/api/charity/campaigns", u.Token, map[string]any{"title": "Hostile", "description": "d",
			"category": "c", "goalKzt": 1_000}), "id")},
		"constitution-artifacts": {created(p.Post(t, "/api/planet/constitution-artifacts", u.Token, map[string]any{"title": "Hostile",
			"sliders": sliderBody([8]int{10, 20, 30, 40, 50, 60, 70, 80})}), "id")},
		"projects":     {project},
		"vacancies":    {fmt.Sprint(buildVacancy(t, p, u, project, nil)["id"])},
		"employers":    {u.ID},
		"partner-keys": {partnerKey},
		"dlq":          {parked},
		"webhook-subs": {sub},
		"guides":       {"getting-started"},
		// A delivery of the caller's own endpoint (the admin log's too).
		"deliveries":         {delivery},
		"webhook-deliveries": {delivery},
	}
}

// hostileParkedRecord parks a command of an unknown type on fiat.commands.dlq
// and returns its DLQ record id once the console lists it.
func hostileParkedRecord(t *testing.T, p *harness.Platform) string {
	t.Helper()
	key, cmdID := "hostile-dlq-"+strings.ToLower(harness.NewID()), harness.NewID()
	value, err := json.Marshal(map[string]any{"id": cmdID, "type": "fiat.future_command", "schemaVersion": 1,
		"occurredAt": time.Now().UTC(), "key": key, "data": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, topics.RawRecord(topics.FiatCommands, key, "fiat.future_command", cmdID, value)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	id := ""
	harness.Eventually(t, 15*time.Second, "the command parked", func() bool {
		var page schemas.Page[schemas.DLQRecord]
		p.Get(t, "/api/platform/admin/dlq?topic=fiat.commands", admin.Token).Decode(t, &page)
		for _, rec := range page.Items {
			if rec.Key == key {
				id = rec.ID
			}
		}
		return id != ""
	})
	return id
}

type hostileBody struct {
	raw         []byte
	json        map[string]any
	contentType string // "-" sends none
}

// The hostile walk's inputs, shared with the selection sent through the
// proxy (TestContractThroughProxy): ids that name nothing or carry NUL and
// invalid UTF-8, malformed queries, and credentials that are all wrong.
var (
	hostileIDs     = []string{"nope", "2ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "%27%3B--", strings.Repeat("9", 300), "%00", "%ff%fe"}
	hostileQueries = []string{"", "?limit=-1&cursor=%25%25&since=yesterday", "?cursor=AA&maskId=%00&offset=-5", "?kind=%ff&limit=99999999999999999999&city=%00"}
	hostileHeaders = map[string]string{"X-API-Key": "mk_live_bogus", "Stripe-Signature": "t=1,v1=00",
		"X-Reputation-Service-Key": "wrong", "X-Build-Key": "qb_pk_bogus", "X-Platform-Signature": "sha256=00",
		"X-Platform-Timestamp": "1"}
)

// hostileBodies are the malformed bodies of the walk: not JSON, the wrong
// JSON, deep nesting, wrong types and huge values, NUL bytes and invalid
// UTF-8 (around a real wallet), a wrong and a missing content type.
func hostileBodies(wallet string) []hostileBody {
	return []hostileBody{
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
}

// request is b sent as method path by token, with headers and b's content
// type.
func (b hostileBody) request(method, path, token string, headers map[string]string) harness.Request {
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
	return harness.Request{Method: method, Path: path, Token: token, Body: body, Headers: h}
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
