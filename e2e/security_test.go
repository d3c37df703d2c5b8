package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
)

// securityPlatform is one platform with a real processor key configured and
// its own fiat allowlist, shared by the tests of this file.
var (
	securityOnce sync.Once
	securityP    *harness.Platform
)

const (
	securityBoss      = "boss@security.example.com"
	securityBootstrap = "bootstrap@security.example.com"
	securityCreated   = "created@security.example.com"
	securitySquatted  = "squatted@security.example.com"
)

func securityPlatform(t *testing.T) *harness.Platform {
	t.Helper()
	securityOnce.Do(func() {
		ptb := harness.NewProcessTB()
		securityP = harness.Start(ptb, harness.Options{Env: map[string]string{
			"PROCESSOR_API_KEY": "sk_test_not_a_real_key",
			"FIAT_ADMIN_EMAILS": securityBoss + "," + securityBootstrap + "," + securityCreated + "," + securitySquatted,
			"GOV_ADMIN_EMAILS":  securityCreated,
		}})
		processCleanups = append(processCleanups, ptb.Close)
	})
	return securityP
}

// TestTestProcessorOnlyWithoutRealKey: the local checkout page and its Pay
// route exist only in test-processor mode; with a real key they are 404 and
// nothing in the process signs processor events.
func TestTestProcessorOnlyWithoutRealKey(t *testing.T) {
	t.Run("test mode pays through the embedded processor", func(t *testing.T) {
		p := shared(t)
		if v := p.Get(t, "/api/platform/version", "").JSON(t); v["processor"] != "test" {
			t.Fatalf("version = %v", v)
		}
		u := p.Register(t, "checkout")
		w := fiatCreateWallet(t, p, u, "KZT")
		dep := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": w, "amount": 700})
		path := strings.TrimPrefix(dep.JSON(t)["url"].(string), p.BaseURL)
		page := p.Get(t, path, "")
		if page.Status != 200 || !bytes.Contains(page.Body, []byte("<form")) {
			t.Fatalf("checkout page: %d %s", page.Status, page.Body)
		}
		resp, err := http.Post(p.BaseURL+path+"/pay", "application/x-www-form-urlencoded", strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(html, []byte("completed")) {
			t.Fatalf("pay: %d %s", resp.StatusCode, html)
		}
		if b := fiatBalance(t, p, u, w); b != 700 {
			t.Fatalf("balance after checkout = %d", b)
		}
	})
	t.Run("real processor key removes the test processor", func(t *testing.T) {
		p := securityPlatform(t)
		if v := p.Get(t, "/api/platform/version", "").JSON(t); v["processor"] != "stripe" {
			t.Fatalf("version = %v", v)
		}
		for _, path := range []string{"/api/fiat/checkout/cs_test_x", "/api/fiat/checkout/cs_test_x/pay"} {
			method := http.MethodGet
			if strings.HasSuffix(path, "/pay") {
				method = http.MethodPost
			}
			r := p.Do(t, harness.Request{Method: method, Path: path})
			if r.Status != http.StatusNotFound {
				t.Fatalf("%s %s = %d %s, want 404", method, path, r.Status, r.Body)
			}
		}
	})
}

// TestAdminNeedsVerifiedEmail: an allow-listed e-mail that registered
// itself is never an admin through the web: the mailed link's GET only shows
// a page (a mail scanner confirms nothing), the page's button confirms the
// address (driven in headless Chromium), and the role stays "user" until
// the operator verifies the account on the server; the existing token then
// gains the role at once.
func TestAdminNeedsVerifiedEmail(t *testing.T) {
	p := securityPlatform(t)
	boss := p.RegisterEmail(t, securityBoss)
	role := func(u harness.User) any { return p.Get(t, "/api/auth/me", u.Token).JSON(t)["role"] }
	// The partner reads answer 403 email_unverified until the address is verified.
	verified := func(u harness.User) bool { return p.Get(t, "/api/rights/royalties", u.Token).Status == http.StatusOK }
	if r := role(boss); r != "user" {
		t.Fatalf("unverified allow-listed address has role %v", r)
	}
	if r := p.Get(t, "/api/fiat/admin/audit", boss.Token); r.Status != http.StatusForbidden {
		t.Fatalf("unverified admin reads the audit: %d %s", r.Status, r.Body)
	}

	if r := p.Post(t, "/api/auth/verify-email", boss.Token, map[string]any{}); r.Status != 200 {
		t.Fatalf("verify-email: %d %s", r.Status, r.Body)
	}
	link := p.MailedLink(t, securityBoss, "/api/auth/verify-email?token=")
	path := strings.TrimPrefix(link, p.BaseURL)
	for i := 0; i < 2; i++ { // a scanner, and the owner's preview
		r := p.Get(t, path, "")
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'nonce-") {
			t.Fatalf("open link: %d %v %s", r.Status, r.Header, r.Body)
		}
	}
	if verified(boss) {
		t.Fatal("a GET of the mailed link verified the address")
	}

	ctx, dialogs := headlessBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible("#confirm"),
		chromedp.Click("#confirm"), chromedp.WaitVisible("#result")); err != nil {
		t.Fatalf("confirm in the browser: %v", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text("#result"))
	if err != nil || !strings.Contains(shown, "is verified") {
		t.Fatalf("the page says %q (%v)", shown, err)
	}
	select {
	case d := <-dialogs:
		t.Fatalf("the page opened a dialog: %q", d)
	default:
	}
	if !verified(boss) {
		t.Fatal("the page's button did not verify the address")
	}
	// The web link never grants the allow-listed role.
	if r := role(boss); r != "user" {
		t.Fatalf("a self-registered allow-listed address verified through the web has role %v", r)
	}
	if r := p.Get(t, "/api/fiat/admin/audit", boss.Token); r.Status != http.StatusForbidden {
		t.Fatalf("a web-verified squatter reads the audit: %d %s", r.Status, r.Body)
	}
	token := harness.LinkToken(t, link)
	if r := p.Post(t, "/api/auth/verify-email/confirm", "", map[string]string{"token": token}); r.Status != http.StatusNotFound ||
		r.JSON(t)["error"] != "verification_invalid" {
		t.Fatalf("second use of the link: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/auth/verify-email/confirm", "", map[string]string{"token": "forged"}); r.Status != http.StatusNotFound {
		t.Fatalf("forged token: %d %s", r.Status, r.Body)
	}
	// The operator confirms it on the server: the existing token gains the role.
	p.ConfirmAdmin(t, securityBoss)
	if r := role(boss); r != "admin" {
		t.Fatalf("operator-confirmed admin's existing token has role %v", r)
	}
	if r := p.Get(t, "/api/fiat/admin/audit", boss.Token); r.Status != http.StatusOK {
		t.Fatalf("confirmed admin reads the audit: %d %s", r.Status, r.Body)
	}

	// A user off the allowlist stays a user after verifying.
	plain := p.Register(t, "plain")
	p.VerifyEmail(t, plain)
	if r := role(plain); r != "user" {
		t.Fatalf("verified non-admin has role %v", r)
	}

	// Bootstrap on the server: `platform admin verify <email>`, which a
	// self-registered account needs --i-know-who-registered for.
	boot := p.RegisterEmail(t, securityBootstrap)
	if r := role(boot); r != "user" {
		t.Fatalf("before bootstrap: role %v", r)
	}
	cmd := exec.Command(harness.Binary(t), "admin", "verify", strings.ToUpper(securityBootstrap), "--i-know-who-registered")
	cmd.Env = p.Env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "role now: admin") {
		t.Fatalf("platform admin verify: %v %s", err, out)
	}
	if r := role(boot); r != "admin" {
		t.Fatalf("after bootstrap: role %v", r)
	}
	cmd = exec.Command(harness.Binary(t), "admin", "verify", "nobody@security.example.com")
	cmd.Env = p.Env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no account") {
		t.Fatalf("verify of an unknown address: %v %s", err, out)
	}
}

// TestLedgerUserEntriesCannotForgeModuleKinds: kinds of the platform's
// modules are refused from POST /entries, and user entries de-duplicate per
// actor, so nobody can pre-empt someone else's (or a module's) entry.
func TestLedgerUserEntriesCannotForgeModuleKinds(t *testing.T) {
	p := shared(t)
	a, b := p.Register(t, "forger"), p.Register(t, "honest")
	for _, kind := range []string{"fiat:transfer", "FIAT:deposit", " mask:charge", "charity:donation", "gov:decision", "trade:transfer"} {
		r := p.Post(t, "/api/ledger/entries", a.Token, map[string]any{"kind": kind, "sourceId": "tx-1"})
		if r.Status != http.StatusForbidden || r.JSON(t)["error"] != "forbidden" {
			t.Fatalf("kind %q: %d %s, want 403 forbidden", kind, r.Status, r.Body)
		}
	}
	src := "shared-source-" + a.ID
	ra := p.Post(t, "/api/ledger/entries", a.Token, map[string]any{"kind": "note:claim", "sourceId": src})
	rb := p.Post(t, "/api/ledger/entries", b.Token, map[string]any{"kind": "note:claim", "sourceId": src})
	if ra.Status != http.StatusCreated || rb.Status != http.StatusCreated {
		t.Fatalf("user entries: %d %s / %d %s", ra.Status, ra.Body, rb.Status, rb.Body)
	}
	ea, eb := ra.JSON(t), rb.JSON(t)
	if ea["id"] == eb["id"] || ea["actorUserId"] != a.ID || eb["actorUserId"] != b.ID {
		t.Fatalf("one user's entry pre-empted the other's: %v / %v", ea, eb)
	}
	again := p.Post(t, "/api/ledger/entries", a.Token, map[string]any{"kind": "note:claim", "sourceId": src})
	if again.Status != http.StatusOK || again.JSON(t)["id"] != ea["id"] {
		t.Fatalf("same actor, same source: %d %s, want 200 with entry %v", again.Status, again.Body, ea["id"])
	}
}

// TestNoBadTextReachesStorage: NUL bytes and invalid UTF-8 anywhere in a
// request are refused at the edge with the field named, never a 500.
func TestNoBadTextReachesStorage(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "badtext")
	w := fiatCreateWallet(t, p, u, "KZT")
	tests := []struct {
		name   string
		req    harness.Request
		status int
		code   string
		field  string
	}{
		{"cursor of one NUL byte", harness.Request{Method: "GET", Path: "/api/fiat/transactions?cursor=AA", Token: u.Token}, 400, "invalid_cursor", ""},
		{"NUL in a query value", harness.Request{Method: "GET", Path: "/api/mask/charges?maskId=%00", Token: u.Token}, 422, "validation_failed", "maskId"},
		{"invalid UTF-8 in a query value", harness.Request{Method: "GET", Path: "/api/ledger/entries?kind=%ff", Token: u.Token}, 422, "validation_failed", "kind"},
		{"NUL in a path parameter", harness.Request{Method: "POST", Path: "/api/mask/masks/%00/revoke", Token: u.Token, Body: map[string]any{}}, 422, "validation_failed", "id"},
		{"NUL in a memo", harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: u.Token,
			Body: map[string]any{"fromWalletId": w, "toEmail": "x@example.com", "amountKzt": 100, "memo": "a\u0000b"}}, 422, "validation_failed", "memo"},
		{"NUL in a register name", harness.Request{Method: "POST", Path: "/api/auth/register",
			Body: map[string]any{"email": "nul@example.com", "password": "correct-horse-1", "name": "x\u0000"}}, 422, "validation_failed", "name"},
		{"invalid UTF-8 in a JSON string", harness.Request{Method: "POST", Path: "/api/fiat/requests", Token: u.Token,
			Body: []byte("{\"walletId\":\"" + w + "\",\"amount\":5,\"description\":\"\xff\xfe\"}")}, 422, "validation_failed", "description"},
		{"invalid UTF-8 in an Idempotency-Key", harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: u.Token,
			Headers: map[string]string{"Idempotency-Key": "k\xff"}, Body: map[string]any{"fromWalletId": w}}, 422, "validation_failed", "Idempotency-Key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Do(t, tt.req)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			body := r.JSON(t)
			if body["error"] != tt.code {
				t.Fatalf("body %s, want error %s", r.Body, tt.code)
			}
			if tt.field != "" {
				fields, _ := body["fields"].(map[string]any)
				if fields[tt.field] == nil {
					t.Fatalf("fields %v do not name %s", fields, tt.field)
				}
			}
		})
	}
}

// TestWritesWithoutKeyGetOne: the gateway gives a write sent without an
// Idempotency-Key a key of its own and returns it, so the retry the 503
// answer asks for cannot apply the write twice.
func TestWritesWithoutKeyGetOne(t *testing.T) {
	p := shared(t)
	from, to := p.Register(t, "autokey-from"), p.Register(t, "autokey-to")
	w := fiatCreateWallet(t, p, from, "KZT")
	fiatDeposit(t, p, fiatSecret(t, p), from, w, 10_000)
	body := map[string]any{"fromWalletId": w, "toEmail": to.Email, "amountKzt": 1_000}
	first := p.Post(t, "/api/fiat/transfer", from.Token, body)
	key := first.Header.Get("Idempotency-Key")
	if first.Status != http.StatusOK || key == "" {
		t.Fatalf("transfer: %d %s, Idempotency-Key %q", first.Status, first.Body, key)
	}
	retry := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: from.Token, Body: body,
		Headers: map[string]string{"Idempotency-Key": key}})
	if retry.Status != http.StatusOK || retry.Header.Get("Idempotent-Replayed") != "true" ||
		retry.JSON(t)["transactionId"] != first.JSON(t)["transactionId"] {
		t.Fatalf("retry with the assigned key: %d %s", retry.Status, retry.Body)
	}
	if b := fiatBalance(t, p, from, w); b != 10_000-1_000-1 {
		t.Fatalf("balance %d: the transfer was applied more than once", b)
	}
	// A fresh request without a key is a new write with a new key.
	second := p.Post(t, "/api/fiat/transfer", from.Token, body)
	if second.Status != http.StatusOK || second.Header.Get("Idempotency-Key") == key ||
		second.JSON(t)["transactionId"] == first.JSON(t)["transactionId"] {
		t.Fatalf("second transfer: %d %s", second.Status, second.Body)
	}
}

// TestPaidDepositToFrozenWalletNeedsReview: a paid deposit whose wallet is
// frozen is not refused (the refusal used to be cached for 24 h while the
// money sat at the processor): it waits in needs_review, admins credit it
// once the wallet is active or refund it, and reconciliation reports it.
func TestPaidDepositToFrozenWalletNeedsReview(t *testing.T) {
	p := shared(t)
	secret := fiatSecret(t, p)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	u := p.Register(t, "frozen")
	w := fiatCreateWallet(t, p, u, "KZT")
	setStatus := func(action string) {
		if r := p.Post(t, "/api/fiat/admin/wallets/"+w+"/"+action, admin.Token, map[string]any{}); r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", action, r.Status, r.Body)
		}
	}
	deposit := func(amount int64) (string, string) {
		r := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": w, "amount": amount})
		if r.Status != http.StatusCreated {
			t.Fatalf("deposit: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)["depositId"].(string), "evt_" + harness.NewID()
	}
	pay := func(depID, evID string, amount int64) map[string]any {
		r := fiatSignedWebhook(t, p, secret, fiatEvent(t, evID, depID, amount, "kzt"))
		if r.Status != http.StatusOK {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)
	}
	// The wallet is frozen between opening the checkout and the payment.
	dep1, ev1 := deposit(3_000)
	setStatus("freeze")
	if out := pay(dep1, ev1, 3_000); out["status"] != "needs_review" {
		t.Fatalf("paid deposit to a frozen wallet: %v", out)
	}
	// The processor's retry credits nothing; another paid event naming the
	// same deposit is a second payment, in review of its own.
	if out := pay(dep1, ev1, 3_000); out["status"] != "needs_review" {
		t.Fatalf("retry: %v", out)
	}
	if out := pay(dep1, "evt_"+harness.NewID(), 3_000); out["status"] != "needs_review" || out["idempotent"] != false || out["depositId"] == dep1 {
		t.Fatalf("second event: %v", out)
	}
	queue := p.Get(t, "/api/fiat/admin/deposits", admin.Token)
	if queue.Status != http.StatusOK || !strings.Contains(string(queue.Body), dep1) {
		t.Fatalf("review queue: %d %s", queue.Status, queue.Body)
	}
	if r := p.Get(t, "/api/fiat/admin/deposits", u.Token); r.Status != http.StatusForbidden {
		t.Fatalf("a user reads the review queue: %d", r.Status)
	}
	if r := p.Post(t, "/api/fiat/admin/deposits/"+dep1+"/credit", admin.Token, map[string]any{}); r.Status != http.StatusBadRequest ||
		r.JSON(t)["error"] != "wallet_inactive" {
		t.Fatalf("credit into a frozen wallet: %d %s", r.Status, r.Body)
	}
	rec := p.Get(t, "/api/fiat/admin/reconcile", admin.Token).JSON(t)
	if review, _ := rec["depositReview"].(map[string]any); review == nil || review["needsReview"].(float64) < 1 {
		t.Fatalf("reconcile does not report the deposit: %v", rec)
	}
	setStatus("unfreeze")
	if b := fiatBalance(t, p, u, w); b != 0 {
		t.Fatalf("balance before review = %d", b)
	}
	if r := p.Post(t, "/api/fiat/admin/deposits/"+dep1+"/credit", admin.Token, map[string]any{}); r.Status != http.StatusOK ||
		r.JSON(t)["status"] != "completed" {
		t.Fatalf("admin credit: %d %s", r.Status, r.Body)
	}
	if b := fiatBalance(t, p, u, w); b != 3_000 {
		t.Fatalf("balance after review = %d", b)
	}
	if r := p.Post(t, "/api/fiat/admin/deposits/"+dep1+"/credit", admin.Token, map[string]any{}); r.Status != http.StatusConflict {
		t.Fatalf("second credit: %d %s", r.Status, r.Body)
	}

	// Refund to the processor instead.
	dep2, ev2 := deposit(500)
	setStatus("freeze")
	pay(dep2, ev2, 500)
	if r := p.Post(t, "/api/fiat/admin/deposits/"+dep2+"/refund", admin.Token, map[string]any{"reason": "account closed"}); r.Status != http.StatusOK ||
		r.JSON(t)["status"] != "refunded" {
		t.Fatalf("refund: %d %s", r.Status, r.Body)
	}
	setStatus("unfreeze")
	// A new paid event after the refund is a payment of its own, in review.
	if out := pay(dep2, "evt_"+harness.NewID(), 500); out["status"] != "needs_review" || out["depositId"] == dep2 {
		t.Fatalf("event after the refund: %v", out)
	}
	if b := fiatBalance(t, p, u, w); b != 3_000 {
		t.Fatalf("the refunded deposit was credited: balance %d", b)
	}
	if r := p.Get(t, "/api/fiat/admin/deposits?status=refunded", admin.Token); !strings.Contains(string(r.Body), dep2) {
		t.Fatalf("refunded list: %d %s", r.Status, r.Body)
	}
}

// TestChainVerifyIncremental: a public verify call walks only the entries
// appended since the last verified head (verifiedFrom), never the whole
// chain again, and reports when the background full walk last ran.
func TestChainVerifyIncremental(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "verify-incremental")
	verify := func() map[string]any {
		r := p.Get(t, "/api/ledger/chain/verify", "")
		if r.Status != http.StatusOK {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)
	}
	first := verify()
	if first["valid"] != true {
		t.Fatalf("verify: %v", first)
	}
	for i := range 3 {
		if r := p.Post(t, "/api/ledger/entries", u.Token, map[string]any{"kind": "note:incremental", "sourceId": fmt.Sprintf("%d-%s", i, u.ID)}); r.Status != http.StatusCreated {
			t.Fatalf("append: %d %s", r.Status, r.Body)
		}
		next := verify()
		// Other tests may append meanwhile: the walk starts at or after the
		// head the previous call verified, never at the genesis.
		from, ok := next["verifiedFrom"].(float64)
		if !ok || from < first["height"].(float64) || next["height"].(float64) <= first["height"].(float64) || next["valid"] != true {
			t.Fatalf("after an append: %v (previous head %v)", next, first["height"])
		}
		if next["fullWalkAt"] == nil {
			t.Fatalf("no full walk reported: %v", next)
		}
		first = next
	}
}

// TestHTMLPagesCarryNonceCSP: every HTML page is served under a CSP whose
// nonce is fresh per response and carried by each of its inline scripts and
// styles, so nothing else on the page can run.
func TestHTMLPagesCarryNonceCSP(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "csp")
	w := fiatCreateWallet(t, p, u, "KZT")
	dep := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": w, "amount": 100})
	req := p.Post(t, "/api/fiat/requests", u.Token, map[string]any{"walletId": w, "amount": 100, "description": "csp"})
	if dep.Status != http.StatusCreated || req.Status != http.StatusCreated {
		t.Fatalf("setup: %d %s / %d %s", dep.Status, dep.Body, req.Status, req.Body)
	}
	pages := map[string]string{
		"checkout":     strings.TrimPrefix(dep.JSON(t)["url"].(string), p.BaseURL),
		"pay page":     "/api/fiat/requests/" + req.JSON(t)["token"].(string),
		"admin stream": "/api/fiat/admin/stream",
	}
	tag := regexp.MustCompile(`<(script|style)\b[^>]*>`)
	for name, path := range pages {
		t.Run(name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 2 {
				r := p.Do(t, harness.Request{Method: "GET", Path: path, Headers: map[string]string{"Accept": "text/html"}})
				csp := r.Header.Get("Content-Security-Policy")
				m := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9+/=_-]+)'`).FindStringSubmatch(csp)
				if r.Status != http.StatusOK || m == nil || !strings.Contains(csp, "default-src 'none'") {
					t.Fatalf("%d, CSP %q", r.Status, csp)
				}
				if seen[m[1]] {
					t.Fatalf("nonce %s served twice", m[1])
				}
				seen[m[1]] = true
				tags := tag.FindAllString(string(r.Body), -1)
				if len(tags) == 0 {
					t.Fatalf("no inline script or style on the page")
				}
				for _, tg := range tags {
					if !strings.Contains(tg, `nonce="`+m[1]+`"`) {
						t.Fatalf("tag %s lacks the response's nonce %s", tg, m[1])
					}
				}
			}
		})
	}
}

// TestSecretsAndPersonalDataSealedAtRest: KYC document numbers, bank
// accounts and webhook secrets are stored sealed (AEAD under
// DATA_ENCRYPTION_KEY), never in clear.
func TestSecretsAndPersonalDataSealedAtRest(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "at-rest")
	w := fiatCreateWallet(t, p, u, "KZT")
	fiatDeposit(t, p, fiatSecret(t, p), u, w, 50_000)
	const doc, acct, secret = "DOC-7741-XQ", "KZ86125KZT5004100100", "whsec-at-rest-0123456789abcdef"
	if r := p.Post(t, "/api/fiat/kyc/submit", u.Token, map[string]any{"fullName": "A B", "documentType": "passport",
		"documentNumber": doc, "country": "KZ"}); r.Status != http.StatusCreated {
		t.Fatalf("kyc: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/payouts", u.Token, map[string]any{"walletId": w, "amount": 1_000, "bankAccount": acct}); r.Status != http.StatusCreated {
		t.Fatalf("payout: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/me/webhook", u.Token, map[string]any{"password": u.Password, "url": "https://hooks.example.com/x", "secret": secret}); r.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	db, err := pgx.Connect(context.Background(), p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	for _, q := range []struct{ what, sql, clear string }{
		{"KYC document number", `SELECT document_number FROM fiat_kyc WHERE user_id = $1`, doc},
		{"bank account", `SELECT bank_account FROM fiat_payouts WHERE user_id = $1`, acct},
		{"webhook secret", `SELECT secret FROM webhook_subscriptions WHERE user_id = $1`, secret},
	} {
		var stored string
		if err := db.QueryRow(context.Background(), q.sql, u.ID).Scan(&stored); err != nil {
			t.Fatalf("%s: %v", q.what, err)
		}
		if !strings.HasPrefix(stored, "sealed:v1:") || strings.Contains(stored, q.clear) {
			t.Fatalf("%s stored as %q", q.what, stored)
		}
	}
	var audit string
	if err := db.QueryRow(context.Background(), `SELECT string_agg(detail, ' ') FROM fiat_audit`).Scan(&audit); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(audit, acct) || strings.Contains(audit, doc) {
		t.Fatalf("the audit holds personal data in clear")
	}
}
