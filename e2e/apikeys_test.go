package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

type apiKey struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	ExpiresAt  *string  `json:"expiresAt"`
	Key        string   `json:"key"`
}

// createKey makes a restricted API key of u with scopes.
func createKey(t *testing.T, p *harness.Platform, u harness.User, name string, scopes ...string) apiKey {
	t.Helper()
	r := p.Post(t, "/api/auth/api-keys", u.Token, map[string]any{"password": u.Password, "name": name, "scopes": scopes})
	var k apiKey
	r.Decode(t, &k)
	if r.Status != http.StatusCreated || !strings.HasPrefix(k.Key, "rk_live_") || k.ID == "" {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	return k
}

func apiKeysOf(t *testing.T, p *harness.Platform, u harness.User) []apiKey {
	t.Helper()
	r := p.Get(t, "/api/auth/api-keys", u.Token)
	if r.Status != http.StatusOK {
		t.Fatalf("list keys: %d %s", r.Status, r.Body)
	}
	var list struct {
		Items []apiKey `json:"items"`
	}
	r.Decode(t, &list)
	return list.Items
}

// wantRefused fails unless r is status with error code (and, for
// insufficient_scope, names scope).
func wantRefused(t *testing.T, what string, r harness.Response, status int, code, scope string) {
	t.Helper()
	body := r.JSON(t)
	if r.Status != status || body["error"] != code || (scope != "" && body["scope"] != scope) {
		t.Errorf("%s: %d %s, want %d %s %s", what, r.Status, r.Body, status, code, scope)
	}
}

// TestAPIKeysActWithinTheirScopes: a restricted key is shown once and
// listed without it; sent as a bearer token it acts as its user within its
// scopes (a write scope grants the read of its area), answers 403
// insufficient_scope naming the scope outside them, never reaches admin
// routes, identity or key management whatever its scopes, and answers 401
// key_invalid at once after its owner revokes it (another user's revoke is
// 404).
func TestAPIKeysActWithinTheirScopes(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "keyowner")
	other := p.Register(t, "keyother")
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)

	read := createKey(t, p, u, "reporting", "fiat:read", "account:read")
	if read.Prefix != read.Key[:len(read.Prefix)] || len(read.Prefix) < 12 || len(read.Key) < 40 ||
		strings.Join(read.Scopes, ",") != "account:read,fiat:read" || read.ExpiresAt != nil || read.LastUsedAt != nil {
		t.Fatalf("created key: %+v", read)
	}
	r := p.Get(t, "/api/auth/api-keys", u.Token)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), read.Key) || !strings.Contains(string(r.Body), read.Prefix) {
		t.Fatalf("the list shows the key or not its prefix: %d %s", r.Status, r.Body)
	}

	// Within scope: acts as its user.
	if r := p.Get(t, "/api/auth/me", read.Key); r.Status != http.StatusOK || r.JSON(t)["id"] != u.ID {
		t.Fatalf("GET /me with the key: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/wallets", read.Key); r.Status != http.StatusOK {
		t.Fatalf("GET /wallets with fiat:read: %d %s", r.Status, r.Body)
	}
	// Outside scope: 403 insufficient_scope naming the scope.
	wantRefused(t, "create a wallet with fiat:read", p.Post(t, "/api/fiat/wallets", read.Key, map[string]string{"currency": "KZT"}),
		http.StatusForbidden, "insufficient_scope", "fiat:write")
	wantRefused(t, "list webhooks with fiat:read", p.Get(t, "/api/fiat/me/webhooks", read.Key),
		http.StatusForbidden, "insufficient_scope", "webhooks:read")
	wantRefused(t, "a mask with fiat:read", p.Get(t, "/api/mask/masks", read.Key),
		http.StatusForbidden, "insufficient_scope", "mask:read")

	// A write scope grants its read.
	write := createKey(t, p, u, "payments", "fiat:write")
	if r := p.Post(t, "/api/fiat/wallets", write.Key, map[string]string{"currency": "KZT"}); r.Status != http.StatusCreated {
		t.Fatalf("create a wallet with fiat:write: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/fiat/wallets", write.Key); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "KZT") {
		t.Fatalf("read wallets with fiat:write: %d %s", r.Status, r.Body)
	}
	wantRefused(t, "GET /me without account:read", p.Get(t, "/api/auth/me", write.Key),
		http.StatusForbidden, "insufficient_scope", "account:read")

	// Never key management, identity or admin routes, whatever the scopes.
	all := createKey(t, p, admin, "everything", "fiat:write", "webhooks:write", "account:read", "gov:write")
	if r := p.Get(t, "/api/fiat/admin/audit", admin.Token); r.Status != http.StatusOK {
		t.Fatalf("the admin's own token on an admin route: %d %s", r.Status, r.Body)
	}
	for name, r := range map[string]harness.Response{
		"admin audit":         p.Get(t, "/api/fiat/admin/audit", all.Key),
		"admin deliveries":    p.Get(t, "/api/fiat/admin/webhook-deliveries", all.Key),
		"list keys":           p.Get(t, "/api/auth/api-keys", all.Key),
		"create a key":        p.Post(t, "/api/auth/api-keys", all.Key, map[string]any{"name": "x", "scopes": []string{"fiat:read"}}),
		"revoke a key":        p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/auth/api-keys/" + all.ID, Token: all.Key}),
		"send verification":   p.Post(t, "/api/auth/verify-email", all.Key, nil),
		"merchant keys":       p.Get(t, "/api/fiat/merchant/keys", all.Key),
		"mint a merchant key": p.Post(t, "/api/fiat/merchant/keys", all.Key, map[string]any{"label": "x"}),
	} {
		wantRefused(t, name+" with a key", r, http.StatusForbidden, "forbidden", "")
	}

	// Bad requests.
	for name, body := range map[string]any{
		"unknown scope": map[string]any{"name": "x", "scopes": []string{"fiat:admin"}},
		"no scopes":     map[string]any{"name": "x", "scopes": []string{}},
		"past expiry":   map[string]any{"name": "x", "scopes": []string{"fiat:read"}, "expiresAt": "2020-01-01T00:00:00Z"},
		"blank name":    map[string]any{"name": " ", "scopes": []string{"fiat:read"}},
	} {
		if r := p.Post(t, "/api/auth/api-keys", u.Token, body); r.Status != http.StatusUnprocessableEntity ||
			r.JSON(t)["error"] != "validation_failed" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r = p.Post(t, "/api/auth/api-keys", u.Token, map[string]any{"password": u.Password, "name": "short", "scopes": []string{"fiat:read"}, "expiresAt": future})
	if r.Status != http.StatusCreated || r.JSON(t)["expiresAt"] != future {
		t.Fatalf("a key with an expiry: %d %s", r.Status, r.Body)
	}

	// The last use is recorded; the list is newest first.
	keys := apiKeysOf(t, p, u)
	if len(keys) != 3 || keys[2].ID != read.ID || keys[2].LastUsedAt == nil || keys[1].ID != write.ID {
		t.Fatalf("keys after use: %+v", keys)
	}

	// Revocation: another user's id is 404 and changes nothing; the
	// owner's revoke holds at once.
	del := func(token, id string) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/auth/api-keys/" + id, Token: token})
	}
	wantRefused(t, "another user revokes", del(other.Token, read.ID), http.StatusNotFound, "not_found", "")
	if r := p.Get(t, "/api/fiat/wallets", read.Key); r.Status != http.StatusOK {
		t.Fatalf("after another user's revoke: %d %s", r.Status, r.Body)
	}
	if r := del(u.Token, read.ID); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	wantRefused(t, "a revoked key", p.Get(t, "/api/fiat/wallets", read.Key), http.StatusUnauthorized, "key_invalid", "")
	wantRefused(t, "revoke twice", del(u.Token, read.ID), http.StatusNotFound, "not_found", "")
	wantRefused(t, "a made-up key", p.Get(t, "/api/fiat/wallets", "rk_live_"+strings.Repeat("A", 43)),
		http.StatusUnauthorized, "key_invalid", "")
	for _, k := range apiKeysOf(t, p, u) {
		if k.ID == read.ID {
			t.Fatal("a revoked key is still listed")
		}
	}
	if r := p.Get(t, "/api/fiat/wallets", write.Key); r.Status != http.StatusOK {
		t.Fatalf("the other key after a revoke: %d %s", r.Status, r.Body)
	}
}

// whsecKey is the HMAC key of a whsec_ secret.
func whsecKey(t *testing.T, secret string) []byte {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	return k
}

// platformSigned reports whether X-Platform-Signature is secret's.
func platformSigned(t *testing.T, h hookHit, secret string) bool {
	ts := h.header.Get("X-Platform-Timestamp")
	mac := hmac.New(sha256.New, whsecKey(t, secret))
	mac.Write([]byte(ts + "."))
	mac.Write(h.body)
	return hmac.Equal([]byte(h.header.Get("X-Platform-Signature")), []byte("sha256="+hex.EncodeToString(mac.Sum(nil))))
}

// TestWebhookRotationOverlap: after a rotation the previous secret keeps
// signing beside the new one (24 h by default): a delivery verifies with
// the old secret and with the new one under the official standardwebhooks
// verifier, and X-Platform-Signature is the new secret's. expiresIn 0 cuts
// the old secret at once; more than 48 h is refused.
func TestWebhookRotationOverlap(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "rotator")
	rcv := newHookReceiver(t)

	r := p.Post(t, "/api/fiat/me/webhook", u.Token, map[string]any{"password": u.Password, "url": rcv.URL()})
	var first endpoint
	r.Decode(t, &first)
	if r.Status != http.StatusCreated || !strings.HasPrefix(first.Secret, "whsec_") {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	before := time.Now()
	r = p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/me/webhook", Token: u.Token, Body: map[string]any{"secret": nil}})
	var rotated struct {
		endpoint
		PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	}
	r.Decode(t, &rotated)
	if r.Status != http.StatusOK || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == first.Secret ||
		rotated.PreviousSecretExpiresAt == nil ||
		rotated.PreviousSecretExpiresAt.Sub(before.Add(24*time.Hour)).Abs() > time.Minute {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	testDelivery := func(path string) hookHit {
		t.Helper()
		n := len(rcv.all())
		if r := p.Post(t, path, u.Token, nil); r.Status != http.StatusAccepted {
			t.Fatalf("test event: %d %s", r.Status, r.Body)
		}
		harness.Eventually(t, 20*time.Second, "the test delivery", func() bool { return len(rcv.all()) > n })
		return rcv.all()[n]
	}
	hit := testDelivery("/api/fiat/me/webhook/test")
	if n := len(strings.Fields(hit.header.Get("webhook-signature"))); n != 2 {
		t.Fatalf("webhook-signature has %d entries in the overlap: %q", n, hit.header.Get("webhook-signature"))
	}
	if e := verifyOfficial(t, first.Secret, []hookHit{hit})[0]; e != "" {
		t.Fatalf("with the OLD secret in the overlap: %s", e)
	}
	if e := verifyOfficial(t, rotated.Secret, []hookHit{hit})[0]; e != "" {
		t.Fatalf("with the NEW secret in the overlap: %s", e)
	}
	if !platformSigned(t, hit, rotated.Secret) || platformSigned(t, hit, first.Secret) {
		t.Fatal("X-Platform-Signature is not the new secret's alone")
	}

	// expiresIn 0: the replaced secret stops at once.
	r = p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/me/webhook", Token: u.Token,
		Body: map[string]any{"expiresIn": 0}})
	var cut endpoint
	r.Decode(t, &cut)
	if r.Status != http.StatusOK || cut.Secret == "" || strings.Contains(string(r.Body), "previousSecretExpiresAt") {
		t.Fatalf("rotate with expiresIn 0: %d %s", r.Status, r.Body)
	}
	hit = testDelivery("/api/fiat/me/webhook/test")
	if n := len(strings.Fields(hit.header.Get("webhook-signature"))); n != 1 {
		t.Fatalf("webhook-signature after a cut: %q", hit.header.Get("webhook-signature"))
	}
	if e := verifyOfficial(t, cut.Secret, []hookHit{hit})[0]; e != "" {
		t.Fatalf("with the new secret after a cut: %s", e)
	}
	if e := verifyOfficial(t, rotated.Secret, []hookHit{hit})[0]; e == "" {
		t.Fatal("the replaced secret still verifies after expiresIn 0")
	}

	// The same through PATCH /webhook-subs/:id with a chosen secret.
	chosen := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a-chosen-secret-of-32-bytes-long"))
	r = p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/webhook-subs/" + first.ID, Token: u.Token,
		Body: map[string]any{"secret": chosen, "expiresIn": 3600}})
	var patched struct {
		PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	}
	r.Decode(t, &patched)
	if r.Status != http.StatusOK || patched.PreviousSecretExpiresAt == nil ||
		patched.PreviousSecretExpiresAt.Sub(time.Now().Add(time.Hour)).Abs() > time.Minute {
		t.Fatalf("patch with a secret and expiresIn: %d %s", r.Status, r.Body)
	}
	hit = testDelivery("/api/fiat/me/webhook/test")
	if verifyOfficial(t, cut.Secret, []hookHit{hit})[0] != "" || verifyOfficial(t, chosen, []hookHit{hit})[0] != "" {
		t.Fatalf("after a patch rotation, old or new does not verify: %q", hit.header.Get("webhook-signature"))
	}
	for _, body := range []map[string]any{{"expiresIn": 172801}, {"expiresIn": -1}} {
		r := p.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/fiat/me/webhook", Token: u.Token, Body: body})
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("expiresIn %v: %d %s", body["expiresIn"], r.Status, r.Body)
		}
	}
}

// TestKeyScopesOfRoutes: the scope each route of the binary needs, as the
// complete document states it (x-api-key-scope) — declared with the routes
// (each module's router names its key area, a route may override it) —
// for a few routes of every area: read for GET, write otherwise, the
// webhook routes under /api/fiat in their own area, and none (closed to
// keys) on public, admin, partner-key, credential and console routes. The
// constitution module's /api-backend mirror, which the document omits,
// is asked with a key.
func TestKeyScopesOfRoutes(t *testing.T) {
	p := shared(t)
	var doc struct {
		Paths map[string]map[string]struct {
			Scope *string `json:"x-api-key-scope"`
		} `json:"paths"`
	}
	p.Get(t, "/api/platform/openapi.full.json", "").Decode(t, &doc)
	for route, want := range map[string]string{
		"GET /api/auth/me":                                  "account:read",
		"GET /api/fiat/wallets":                             "fiat:read",
		"POST /api/fiat/transfer":                           "fiat:write",
		"DELETE /api/fiat/merchant/authorizations/{id}":     "fiat:write",
		"GET /api/fiat/me/webhooks":                         "webhooks:read",
		"PATCH /api/fiat/me/webhook":                        "webhooks:write",
		"GET /api/fiat/me/events/stream":                    "webhooks:read",
		"DELETE /api/fiat/webhook-subs/{id}":                "webhooks:write",
		"POST /api/ledger/entries":                          "ledger:write",
		"GET /api/reputation/me":                            "reputation:read",
		"GET /api/mask/masks":                               "mask:read",
		"POST /api/mask/charges":                            "mask:write",
		"POST /api/gov/proposals/{id}/votes":                "gov:write",
		"POST /api/charity/campaigns/{id}/donations":        "charity:write",
		"GET /api/trade/accounts":                           "trade:read",
		"POST /api/trade/transfer":                          "trade:write",
		"GET /api/sign/keys":                                "sign:read",
		"POST /api/sign/sign":                               "sign:write",
		"GET /api/constitution/scenarios":                   "constitution:read",
		"POST /api/planet/constitution-artifacts/{id}/vote": "constitution:write",
		"GET /api/build/projects":                           "build:read",
		"DELETE /api/build/partner-keys/{id}":               "build:write",
		"GET /api/rights/royalties":                         "partner:read",
		"GET /api/ecosystem/earnings":                       "partner:read",
		// Closed to keys.
		"POST /api/auth/api-keys":                     "",
		"DELETE /api/auth/sessions":                   "",
		"POST /api/fiat/merchant/keys":                "",
		"GET /api/fiat/merchant/charges/{id}/refunds": "",
		"GET /api/fiat/admin/audit":                   "",
		"GET /api/fiat/admin/webhook-deliveries":      "",
		"GET /api/fiat/wallets/{id}/public":           "",
		"GET /api/ledger/entries":                     "",
		"POST /api/gov/proposals/{id}/open":           "",
		"GET /api/build/public/v1/vacancies":          "",
		"GET /api/platform/admin/dlq":                 "",
		"GET /api/platform/events":                    "",
	} {
		method, path, _ := strings.Cut(route, " ")
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s is not in the complete document", route)
			continue
		}
		got := ""
		if op.Scope != nil {
			got = *op.Scope
		}
		if got != want {
			t.Errorf("%s: x-api-key-scope %q, want %q", route, got, want)
		}
	}

	u := p.Register(t, "scopemirror")
	key := createKey(t, p, u, "fiat only", "fiat:read")
	wantRefused(t, "the /api-backend constitution mirror with fiat:read", p.Get(t, "/api-backend/api/constitution/scenarios", key.Key),
		http.StatusForbidden, "insufficient_scope", "constitution:read")
	wantRefused(t, "the /api-backend planet mirror with fiat:read",
		p.Post(t, "/api-backend/api/planet/constitution-artifacts/x/vote", key.Key, map[string]any{}),
		http.StatusForbidden, "insufficient_scope", "constitution:write")
}
