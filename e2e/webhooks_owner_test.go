package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
)

// verifyOfficial checks deliveries with the official Standard Webhooks
// verifier (npm standardwebhooks, pinned in e2e/tools), as an integrator
// would: it returns, per delivery, "" when it verifies or the error.
func verifyOfficial(t *testing.T, secret string, hits []hookHit) []string {
	t.Helper()
	type input struct {
		Secret  string            `json:"secret"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	var in []input
	for _, h := range hits {
		in = append(in, input{Secret: secret, Body: string(h.body), Headers: map[string]string{
			"webhook-id": h.header.Get("webhook-id"), "webhook-timestamp": h.header.Get("webhook-timestamp"),
			"webhook-signature": h.header.Get("webhook-signature")}})
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	redoclyCLI(t) // installs e2e/tools when missing
	cmd := exec.Command("node", "verify-webhooks.js")
	cmd.Dir = "tools"
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify-webhooks.js: %v %s", err, out)
	}
	var res []any
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(hits) {
		t.Fatalf("verifier answered %s", out)
	}
	errs := make([]string, len(res))
	for i, r := range res {
		if r != true {
			errs[i] = fmt.Sprint("not verified: ", r)
		}
	}
	return errs
}

// allVerified fails the test unless every delivery verifies.
func allVerified(t *testing.T, secret string, hits []hookHit) {
	t.Helper()
	if len(hits) == 0 {
		t.Fatal("no deliveries to verify")
	}
	for i, e := range verifyOfficial(t, secret, hits) {
		if e != "" {
			t.Fatalf("delivery %d (%s) does not verify with standardwebhooks: %s", i, hits[i].header.Get("webhook-id"), e)
		}
	}
}

type endpoint struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Primary   bool     `json:"primary"`
	Enabled   bool     `json:"enabled"`
	Secret    string   `json:"secret"`
	CreatedAt string   `json:"createdAt"`
}

type ownerDelivery struct {
	deliveryRow
	LastDurationMs *int `json:"lastDurationMs"`
}

func ownerDeliveries(t *testing.T, p *harness.Platform, u harness.User, path string) []ownerDelivery {
	t.Helper()
	r := p.Get(t, path, u.Token)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var page struct {
		Items []ownerDelivery `json:"items"`
	}
	r.Decode(t, &page)
	return page.Items
}

// TestWebhooksOwnerManagesEndpoints: a secret the server mints is returned
// once and signs deliveries the official verifier accepts; the owner lists,
// changes and deletes endpoints, sees a failing endpoint's deliveries with
// the error and retries them, and sends a signed test event; another user
// gets 404 for all of it.
func TestWebhooksOwnerManagesEndpoints(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "hookowner")
	other := p.Register(t, "hookother")
	rcv := newHookReceiver(t)

	// Create without a secret: a whsec_ secret, shown once.
	r := p.Post(t, "/api/fiat/webhook-subs", u.Token, map[string]any{"password": u.Password, "url": rcv.URL()})
	var created endpoint
	r.Decode(t, &created)
	if r.Status != http.StatusCreated || !strings.HasPrefix(created.Secret, "whsec_") || created.ID == "" {
		t.Fatalf("create without secret: %d %s", r.Status, r.Body)
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(created.Secret, "whsec_")); err != nil || len(key) < 24 {
		t.Fatalf("minted secret %q: %d bytes, %v", created.Secret, len(key), err)
	}
	// A caller-chosen secret still works (the primary endpoint).
	r = p.Post(t, "/api/fiat/me/webhook", u.Token, map[string]any{"password": u.Password, "url": rcv.URL() + "?primary", "secret": hookSecret})
	if r.Status != http.StatusCreated || strings.Contains(string(r.Body), "secret") {
		t.Fatalf("primary with a chosen secret: %d %s", r.Status, r.Body)
	}
	var primary endpoint
	r.Decode(t, &primary)

	// List: both, newest first, no secret anywhere.
	r = p.Get(t, "/api/fiat/me/webhooks", u.Token)
	var list struct {
		Items      []endpoint `json:"items"`
		NextCursor *string    `json:"nextCursor"`
	}
	r.Decode(t, &list)
	if r.Status != http.StatusOK || len(list.Items) != 2 || list.Items[0].ID != primary.ID || !list.Items[0].Primary ||
		list.Items[1].ID != created.ID || list.Items[1].Primary || !list.Items[1].Enabled || list.NextCursor != nil ||
		strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), created.Secret) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	r = p.Get(t, "/api/fiat/me/webhooks?limit=1", u.Token)
	r.Decode(t, &list)
	if len(list.Items) != 1 || list.NextCursor == nil {
		t.Fatalf("first page of one: %s", r.Body)
	}
	r = p.Get(t, "/api/fiat/me/webhooks?limit=1&cursor="+*list.NextCursor, u.Token)
	r.Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != created.ID || list.NextCursor != nil {
		t.Fatalf("second page: %s", r.Body)
	}
	if r := p.Get(t, "/api/fiat/me/webhooks?cursor=bm90LWEtY3Vyc29y", u.Token); r.Status != http.StatusBadRequest {
		t.Fatalf("bad cursor: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/webhook-subs/"+created.ID, u.Token); r.Status != http.StatusOK ||
		strings.Contains(string(r.Body), "secret") {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}

	// Deliveries of both endpoints verify with the official package.
	ev := produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"note": "owner"})
	harness.Eventually(t, 20*time.Second, "two deliveries", func() bool { return len(rcv.forEvent(ev)) == 2 })
	var minted, chosen []hookHit
	for _, h := range rcv.forEvent(ev) {
		if h.status == http.StatusOK && strings.Contains(string(h.body), ev) {
			if len(minted) == 0 && verifyOfficial(t, created.Secret, []hookHit{h})[0] == "" {
				minted = append(minted, h)
			} else {
				chosen = append(chosen, h)
			}
		}
	}
	if len(minted) != 1 || len(chosen) != 1 {
		t.Fatalf("minted-secret deliveries %d, chosen-secret %d", len(minted), len(chosen))
	}
	allVerified(t, "whsec_"+base64.StdEncoding.EncodeToString([]byte(hookSecret)), chosen)

	// Another user: 404 for every route naming the endpoint.
	patch := func(token, id string, body any) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/webhook-subs/" + id, Token: token, Body: body})
	}
	del := func(token, path string) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodDelete, Path: path, Token: token})
	}
	deliveryID := ownerDeliveries(t, p, u, "/api/fiat/webhook-subs/"+created.ID+"/deliveries")[0].ID
	for name, r := range map[string]harness.Response{
		"get":                   p.Get(t, "/api/fiat/webhook-subs/"+created.ID, other.Token),
		"patch":                 patch(other.Token, created.ID, map[string]any{"enabled": false}),
		"deliveries":            p.Get(t, "/api/fiat/webhook-subs/"+created.ID+"/deliveries", other.Token),
		"retry":                 p.Post(t, "/api/fiat/webhook-subs/"+created.ID+"/deliveries/"+deliveryID+"/retry", other.Token, nil),
		"retry via own primary": p.Post(t, "/api/fiat/me/webhook/deliveries/"+deliveryID+"/retry", other.Token, nil),
		"test":                  p.Post(t, "/api/fiat/webhook-subs/"+created.ID+"/test", other.Token, nil),
		"delete":                del(other.Token, "/api/fiat/webhook-subs/"+created.ID),
		"not an id":             p.Get(t, "/api/fiat/webhook-subs/nope", u.Token),
	} {
		if r.Status != http.StatusNotFound || r.JSON(t)["error"] != "not_found" {
			t.Errorf("%s by another user: %d %s", name, r.Status, r.Body)
		}
	}
	if r := p.Get(t, "/api/fiat/webhook-subs/"+created.ID, u.Token); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"enabled":true`) {
		t.Fatalf("the stranger's patch changed it: %s", r.Body)
	}

	// Patch: events and a minted secret (shown once), then pause.
	r = patch(u.Token, created.ID, map[string]any{"events": []string{"webhook.test", "vacancy.opened"}, "secret": nil})
	var patched endpoint
	r.Decode(t, &patched)
	if r.Status != http.StatusOK || !strings.HasPrefix(patched.Secret, "whsec_") || patched.Secret == created.Secret ||
		strings.Join(patched.Events, ",") != "webhook.test,vacancy.opened" {
		t.Fatalf("patch events and secret: %d %s", r.Status, r.Body)
	}
	if r := patch(u.Token, created.ID, map[string]any{"events": []string{"money.printed"}}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("patch to an unknown event: %d %s", r.Status, r.Body)
	}
	if r := patch(u.Token, created.ID, map[string]any{"url": "ftp://x"}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("patch to a bad url: %d %s", r.Status, r.Body)
	}

	// A test event arrives signed with the new secret.
	r = p.Post(t, "/api/fiat/webhook-subs/"+created.ID+"/test", u.Token, nil)
	if r.Status != http.StatusAccepted || r.JSON(t)["type"] != "webhook.test" {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	testEvent := r.JSON(t)["eventId"].(string)
	harness.Eventually(t, 20*time.Second, "test delivery", func() bool { return len(rcv.forEvent(testEvent)) == 1 })
	allVerified(t, patched.Secret, rcv.forEvent(testEvent))
	if body := payloadOf(t, rcv.forEvent(testEvent)[0]); body["type"] != "webhook.test" || body["module"] != "webhooks" {
		t.Fatalf("test payload %v", body)
	}

	// The spec's rotation without a secret mints one, shown once.
	r = p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/me/webhook", Token: u.Token})
	if r.Status != http.StatusOK || !strings.HasPrefix(fmt.Sprint(r.JSON(t)["secret"]), "whsec_") || r.JSON(t)["id"] != primary.ID {
		t.Fatalf("rotate without a secret: %d %s", r.Status, r.Body)
	}

	// Delete the primary endpoint and the other one: gone, 404 after.
	if r := del(u.Token, "/api/fiat/me/webhook"); r.Status != http.StatusNoContent {
		t.Fatalf("delete primary: %d %s", r.Status, r.Body)
	}
	if r := del(u.Token, "/api/fiat/me/webhook"); r.Status != http.StatusNotFound {
		t.Fatalf("delete primary twice: %d %s", r.Status, r.Body)
	}
	if r := del(u.Token, "/api/fiat/webhook-subs/"+created.ID); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/webhook-subs/"+created.ID, u.Token); r.Status != http.StatusNotFound {
		t.Fatalf("get after delete: %d %s", r.Status, r.Body)
	}
	r = p.Get(t, "/api/fiat/me/webhooks", u.Token)
	r.Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("list after delete: %s", r.Body)
	}
}

// TestWebhooksOwnerSeesFailuresAndRetries: a failing endpoint's delivery
// shows its owner the status code, error and duration; the owner retries it
// and it is delivered.
func TestWebhooksOwnerSeesFailuresAndRetries(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "hookfail")
	rcv := newHookReceiver(t, http.StatusInternalServerError)
	sub := subscribeWebhook(t, p, u, rcv.URL(), hookSecret, nil)
	ev := produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"note": "fail"})
	var d ownerDelivery
	harness.Eventually(t, 20*time.Second, "a failed delivery in the owner's log", func() bool {
		for _, x := range ownerDeliveries(t, p, u, "/api/fiat/me/webhook/deliveries") {
			if x.EventID == ev && x.Status == "failed" {
				d = x
				return true
			}
		}
		return false
	})
	if d.WebhookID != sub.ID || d.LastStatusCode == nil || *d.LastStatusCode != 500 || d.LastError == nil ||
		!strings.Contains(*d.LastError, "500") || d.LastDurationMs == nil || d.Attempts != 1 {
		t.Fatalf("failed delivery as the owner sees it: %+v", d)
	}
	if list := ownerDeliveries(t, p, u, "/api/fiat/webhook-subs/"+sub.ID+"/deliveries?status=failed"); len(list) != 1 || list[0].ID != d.ID {
		t.Fatalf("by id and status: %+v", list)
	}
	r := p.Post(t, "/api/fiat/me/webhook/deliveries/"+d.ID+"/retry", u.Token, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("owner retry: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 20*time.Second, "delivered after the retry", func() bool {
		for _, x := range ownerDeliveries(t, p, u, "/api/fiat/webhook-subs/"+sub.ID+"/deliveries") {
			if x.ID == d.ID && x.Status == "delivered" && x.Attempts == 2 {
				return true
			}
		}
		return false
	})
	if r := p.Post(t, "/api/fiat/webhook-subs/"+sub.ID+"/deliveries/"+d.ID+"/retry", u.Token, nil); r.Status != http.StatusConflict ||
		r.JSON(t)["error"] != "invalid_state" {
		t.Fatalf("retry of a delivered delivery: %d %s", r.Status, r.Body)
	}
	hits := rcv.forEvent(ev)
	if len(hits) != 2 || hits[1].status != http.StatusOK {
		t.Fatalf("attempts at the receiver: %d", len(hits))
	}
	allVerified(t, "whsec_"+base64.StdEncoding.EncodeToString([]byte(hookSecret)), hits)
}

// TestWebhooksEventCatalog: every type is described with a schema of its
// data, and the types the platform delivers are listed.
func TestWebhooksEventCatalog(t *testing.T) {
	p := shared(t)
	r := p.Get(t, "/api/platform/events", "")
	var cat struct {
		Items []struct {
			Type, Module, Meaning string
			DataSchema            map[string]any `json:"dataSchema"`
		} `json:"items"`
	}
	r.Decode(t, &cat)
	listed := map[string]string{}
	for _, e := range cat.Items {
		if e.Module == "" || e.Meaning == "" || e.DataSchema["type"] != "object" {
			t.Errorf("incomplete entry %+v", e)
		}
		listed[e.Type] = e.Module
	}
	for typ, module := range map[string]string{"transfer.completed": "fiat", "vacancy.opened": "build",
		"user.registered": "identity", "constitution.scenario_created": "constitution", "webhook.test": "webhooks"} {
		if listed[typ] != module {
			t.Errorf("%s: listed with module %q", typ, listed[typ])
		}
	}
	props, _ := func() (map[string]any, bool) {
		for _, e := range cat.Items {
			if e.Type == "transfer.completed" {
				m, ok := e.DataSchema["properties"].(map[string]any)
				return m, ok
			}
		}
		return nil, false
	}()
	for _, f := range []string{"txId", "fromWallet", "toWallet", "amountKzt", "feeKzt", "description"} {
		if props[f] == nil {
			t.Errorf("transfer.completed data schema lacks %s: %v", f, props)
		}
	}
	// Each type an admin's all-events subscription received on this
	// platform so far is listed, and can be subscribed to.
	u := p.Register(t, "catalog")
	rcv := newHookReceiver(t)
	var types []string
	for typ := range listed {
		types = append(types, typ)
	}
	if r := p.Post(t, "/api/fiat/webhook-subs", u.Token, map[string]any{"password": u.Password, "url": rcv.URL(), "events": types}); r.Status != http.StatusCreated {
		t.Fatalf("subscribing to every listed type: %d %s", r.Status, r.Body)
	}
	// A registration the whole platform delivers (user.registered about u2).
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	arcv := newHookReceiver(t)
	asub := p.Post(t, "/api/fiat/webhook-subs", admin.Token, map[string]any{"password": admin.Password, "url": arcv.URL()})
	if asub.Status != http.StatusCreated {
		t.Fatalf("admin subscription: %d %s", asub.Status, asub.Body)
	}
	defer p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/fiat/webhook-subs/" + asub.JSON(t)["id"].(string), Token: admin.Token})
	p.Register(t, "catalog2")
	harness.Eventually(t, 20*time.Second, "some platform deliveries", func() bool { return len(arcv.all()) > 0 })
	for _, h := range arcv.all() {
		if typ, _ := payloadOf(t, h)["type"].(string); listed[typ] == "" {
			t.Errorf("delivered type %q is not in the catalog", typ)
		}
	}
}

// TestWebhooksListenForwards: `platform webhooks listen` follows the user's
// own events and forwards three of them, signed with the secret it prints,
// to a local receiver that verifies them with the official package.
func TestWebhooksListenForwards(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "listener")
	other := p.Register(t, "notme")
	rcv := newHookReceiver(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), "webhooks", "listen", "--forward-to", rcv.URL(),
		"--server", p.BaseURL)
	cmd.Env = append(cmd.Environ(), "PLATFORM_TOKEN="+u.Token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var (
		mu     sync.Mutex
		secret string
		lines  []string
	)
	connected := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			lines = append(lines, line)
			if s, ok := strings.CutPrefix(line, "Your webhook signing secret is "); ok {
				secret = s
			}
			mu.Unlock()
			if strings.HasPrefix(line, "Connected") {
				close(connected)
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("listen did not connect: %v", lines)
	}
	mu.Lock()
	s := secret
	mu.Unlock()
	if !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("printed secret %q", s)
	}
	notMine := produceEvent(t, p, topics.EventsFiat, "transfer.completed", other.ID, map[string]any{"note": "not mine"})
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"n": i}))
	}
	harness.Eventually(t, 20*time.Second, "three forwarded events", func() bool {
		for _, id := range ids {
			if len(rcv.forEvent(id)) != 1 {
				return false
			}
		}
		return true
	})
	if n := len(rcv.forEvent(notMine)); n != 0 {
		t.Fatalf("another user's event was forwarded %d times", n)
	}
	var hits []hookHit
	for _, id := range ids {
		hits = append(hits, rcv.forEvent(id)...)
	}
	allVerified(t, s, hits)
	for _, h := range hits {
		if payloadOf(t, h)["type"] != "transfer.completed" {
			t.Fatalf("forwarded payload %s", h.body)
		}
	}
	// The stream itself: a bearer token is required.
	if r := p.Get(t, "/api/fiat/me/events/stream", ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("stream without a token: %d", r.Status)
	}
}

// TestWrongMethodIs405: a known path asked with a method it does not serve
// answers 405 method_not_allowed with Allow, in the one error envelope.
func TestWrongMethodIs405(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "wrongverb")
	r := p.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/fiat/me/webhook", Token: u.Token, Body: map[string]any{}})
	allow := r.Header.Get("Allow")
	if r.Status != http.StatusMethodNotAllowed || r.JSON(t)["error"] != "method_not_allowed" ||
		!strings.Contains(allow, "POST") || !strings.Contains(allow, "PATCH") || !strings.Contains(allow, "DELETE") {
		t.Fatalf("PUT /me/webhook: %d Allow %q %s", r.Status, allow, r.Body)
	}
	if r := p.Get(t, "/api/no/such/route", u.Token); r.Status != http.StatusNotFound || r.JSON(t)["error"] != "not_found" {
		t.Fatalf("unknown path: %d %s", r.Status, r.Body)
	}
}

// TestWebhooksEndpointRules: the primary endpoint of /me/webhook counts
// against the cap of 10; an Idempotency-Key on POST /webhook-subs makes a
// retry answer the first answer (one endpoint, one secret) and a different
// body with the same key 409; a PATCH of someone else's endpoint is 404
// whatever its body, before the URL is looked at.
func TestWebhooksEndpointRules(t *testing.T) {
	p := shared(t)
	// The shared platform allows private addresses (development): a local
	// URL nobody listens on, so nothing leaves the machine.
	url := "http://127.0.0.1:9/in"
	t.Run("the primary endpoint counts against the cap", func(t *testing.T) {
		u := p.Register(t, "hook-cap")
		for i := range 10 {
			if r := p.Post(t, "/api/fiat/webhook-subs", u.Token, map[string]any{"password": u.Password, "url": fmt.Sprintf("%s/%d", url, i)}); r.Status != http.StatusCreated {
				t.Fatalf("endpoint %d: %d %s", i, r.Status, r.Body)
			}
		}
		r := p.Post(t, "/api/fiat/me/webhook", u.Token, map[string]any{"password": u.Password, "url": url + "/primary"})
		if r.Status != http.StatusConflict || r.JSON(t)["error"] != "webhook_limit_reached" {
			t.Fatalf("an 11th endpoint through /me/webhook: %d %s, want 409 webhook_limit_reached", r.Status, r.Body)
		}
		other := p.Register(t, "hook-cap-2")
		if r := p.Post(t, "/api/fiat/me/webhook", other.Token, map[string]any{"password": other.Password, "url": url}); r.Status != http.StatusCreated {
			t.Fatalf("primary: %d %s", r.Status, r.Body)
		}
		if r := p.Post(t, "/api/fiat/me/webhook", other.Token, map[string]any{"password": other.Password, "url": url + "/2"}); r.Status != http.StatusOK {
			t.Fatalf("replacing the primary: %d %s", r.Status, r.Body)
		}
	})
	t.Run("Idempotency-Key makes one endpoint with one secret", func(t *testing.T) {
		u := p.Register(t, "hook-idem")
		key := map[string]string{"Idempotency-Key": "sub-" + strings.ToLower(u.ID)}
		body := map[string]any{"url": url, "password": u.Password}
		first := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/webhook-subs", Token: u.Token, Body: body, Headers: key})
		again := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/webhook-subs", Token: u.Token, Body: body, Headers: key})
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || !bytes.Equal(first.Body, again.Body) ||
			again.Header.Get("Idempotent-Replayed") != "true" || first.JSON(t)["secret"] == nil {
			t.Fatalf("retry: %d %s then %d %s (replayed %q)", first.Status, first.Body, again.Status, again.Body,
				again.Header.Get("Idempotent-Replayed"))
		}
		var list struct {
			Items []endpoint `json:"items"`
		}
		p.Get(t, "/api/fiat/me/webhooks", u.Token).Decode(t, &list)
		if len(list.Items) != 1 {
			t.Fatalf("%d endpoints after a retried create, want 1", len(list.Items))
		}
		reused := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/webhook-subs", Token: u.Token,
			Body: map[string]any{"url": url + "/other", "password": u.Password}, Headers: key})
		if reused.Status != http.StatusConflict || reused.JSON(t)["error"] != "idempotency_key_reused" {
			t.Fatalf("same key, other body: %d %s", reused.Status, reused.Body)
		}
	})
	t.Run("PATCH of another's endpoint is 404 before its URL is checked", func(t *testing.T) {
		owner, stranger := p.Register(t, "hook-owner"), p.Register(t, "hook-stranger")
		r := p.Post(t, "/api/fiat/webhook-subs", owner.Token, map[string]any{"password": owner.Password, "url": url})
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		id := r.JSON(t)["id"].(string)
		for _, body := range []map[string]any{{"url": "ftp://not a url"}, {"url": "https://127.0.0.1/"}, {"enabled": false}} {
			got := p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/webhook-subs/" + id, Token: stranger.Token, Body: body})
			if got.Status != http.StatusNotFound {
				t.Fatalf("stranger's PATCH %v: %d %s, want 404", body, got.Status, got.Body)
			}
		}
		if got := p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/webhook-subs/" + id, Token: owner.Token,
			Body: map[string]any{"url": "ftp://x"}}); got.Status != http.StatusUnprocessableEntity {
			t.Fatalf("owner's bad URL: %d %s, want 422", got.Status, got.Body)
		}
	})
}
