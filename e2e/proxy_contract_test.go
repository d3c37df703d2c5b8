package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestContractThroughProxy runs a short selection of the contract and
// hostile-input tests against the local cluster through HAProxy (the
// harness's proxy mode, harness.StartProxied), every answer held to the
// served OpenAPI documents by the conformance checker: the hostile walk's
// own bodies (NUL bytes, invalid UTF-8, deep nesting, huge values, wrong
// and missing content types), ids and queries on a few routes as a user, an
// admin and anonymous; a body of just under 1 MiB nested too deep; bodies
// over 1 MiB, announced and sent, answered 400 payload_too_large; a
// transfer with an Idempotency-Key and its replay byte for byte; an e-mail
// verification through the mail the gateways write. The proxy must pass the
// platform's answers through unchanged: a refusal of its own, a header
// stripped or a body rewritten fails here.
func TestContractThroughProxy(t *testing.T) {
	t.Parallel() // a cluster start: see "Parallel tests" in main_test.go
	harness.NeedCluster(t)
	began := time.Now()
	const budget = "1000000" // the rate limiters on (their headers checked), never reached
	p, c := harness.StartProxied(t, t.Failed, map[string]string{"RATE_LIMIT_READ": budget, "RATE_LIMIT_WRITE": budget,
		"RATE_LIMIT_AUTH": budget, "RATE_LIMIT_MONEY": budget, "RATE_LIMIT_PARTNER": budget})
	t.Logf("cluster up in %s (%s), proxy %s", time.Since(began).Round(time.Second), c.Dir, p.BaseURL)

	alice, bob := p.Register(t, "proxy-alice"), p.Register(t, "proxy-bob")
	p.VerifyEmail(t, alice) // the link from the gateways' shared mail directory
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	wallet := fiatCreateWallet(t, p, alice, "KZT")
	fiatDeposit(t, p, c.Secret("PROCESSOR_WEBHOOK_SECRET"), alice, wallet, 1_000_000)

	// A transfer with an Idempotency-Key and its replay (round robin sends
	// it to the other gateway): the same answer byte for byte.
	body := map[string]any{"fromWalletId": wallet, "toEmail": bob.Email, "amountKzt": 100_000, "memo": "through the proxy"}
	key := map[string]string{"Idempotency-Key": "proxy-" + harness.NewID()}
	tr := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/transfer", Token: alice.Token, Body: body, Headers: key})
	if tr.Status != http.StatusOK {
		t.Fatalf("transfer through the proxy: %d %s", tr.Status, tr.Body)
	}
	again := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/transfer", Token: alice.Token, Body: body, Headers: key})
	if again.Status != http.StatusOK || !bytes.Equal(again.Body, tr.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay through the proxy: %d %s (Idempotent-Replayed %q), first answer %s",
			again.Status, again.Body, again.Header.Get("Idempotent-Replayed"), tr.Body)
	}

	// The hostile walk's inputs on a few routes.
	sent := 0
	send := func(req harness.Request) {
		t.Helper()
		sent++
		r := p.Do(t, req)
		if r.Status >= 500 {
			t.Errorf("%s %.80q (token %v) through the proxy: %d %.300s", req.Method, req.Path, req.Token != "", r.Status, r.Body)
		}
		if r.Header.Get("RateLimit-Limit") == "" || r.Header.Get("RateLimit-Remaining") == "" {
			t.Errorf("%s %.80q through the proxy: %d without the rate-limit headers", req.Method, req.Path, r.Status)
		}
	}
	posts := []struct{ path, token string }{
		{"/api/fiat/transfer", alice.Token}, {"/api/fiat/wallets", alice.Token}, {"/api/auth/register", ""},
		{"/api/fiat/deposit", alice.Token}, {"/api/fiat/transfer", ""},
	}
	for _, rt := range posts {
		for _, b := range hostileBodies(wallet) {
			send(b.request(http.MethodPost, rt.path, rt.token, hostileHeaders))
		}
	}
	gets := []struct{ path, token string }{
		{"/api/fiat/wallets", alice.Token}, {"/api/platform/admin/dlq", admin.Token}, {"/api/fiat/me/deposits", ""},
	}
	for _, rt := range gets {
		for _, q := range hostileQueries {
			send(harness.Request{Method: http.MethodGet, Path: rt.path + q, Token: rt.token, Headers: hostileHeaders})
		}
	}
	for _, id := range append([]string{wallet}, hostileIDs...) {
		send(harness.Request{Method: http.MethodGet, Path: fillParams("/api/fiat/wallets/{id}/public", id), Token: alice.Token})
	}
	// Just under 1 MiB, nested far too deep: refused, not failed.
	deep := strings.Repeat("[", 1<<20-16)
	send(harness.Request{Method: http.MethodPost, Path: "/api/fiat/transfer", Token: alice.Token, Body: deep})

	// Over 1 MiB: announced (the answer comes before the body is sent) and
	// sent whole (the proxy streams it on while the gateway has answered).
	for _, path := range []string{"/api/fiat/transfer", "/api/auth/register"} {
		status, _, b := announceBody(t, p.BaseURL, http.MethodPost, path, alice.Token, 1<<20+1)
		if status != http.StatusBadRequest || !strings.Contains(b, `"payload_too_large"`) {
			t.Errorf("announced body over 1 MiB to %s through the proxy: %d %.300s", path, status, b)
		}
	}
	for _, size := range []int{1<<20 + 1, 4 << 20} {
		r := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/transfer", Token: alice.Token,
			Body: `{"memo":"` + strings.Repeat("x", size) + `"}`})
		sent++
		if r.Status != http.StatusBadRequest || !bytes.Contains(r.Body, []byte(`"payload_too_large"`)) {
			t.Errorf("body of %d bytes through the proxy: %d %.300s", size, r.Status, r.Body)
		}
	}

	req, resp, failed := p.Conformance()
	t.Logf("%d hostile requests through the proxy; conformance: %d requests and %d responses validated, %d mismatches; %s in all",
		sent, req, resp, failed, time.Since(began).Round(time.Second))
	// (/api/auth and /api/platform are in no document: their answers are
	// not validated.)
	if resp < int64(sent)/2 || failed != 0 {
		t.Errorf("conformance through the proxy: %d responses validated for %d hostile requests, %d mismatches", resp, sent, failed)
	}
}
