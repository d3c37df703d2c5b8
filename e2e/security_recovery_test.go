package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// The repros of issue 45 (items 1 to 3), each refused.

// TestAdminAPIKeyWebhookGetsOnlyOwnEvents: an endpoint a fiat admin makes
// with an API key (webhooks:write) receives only the admin's own events,
// never another user's user.registered; the same admin's login session
// (development: no two-factor needed) still makes one that receives every
// user's events.
func TestAdminAPIKeyWebhookGetsOnlyOwnEvents(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	key := createKey(t, p, admin, "hooks-by-key", "webhooks:write")
	defer p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/auth/api-keys/" + key.ID, Token: admin.Token})

	byKey, bySession := newHookReceiver(t), newHookReceiver(t)
	for _, sub := range []struct {
		token string
		rcv   *hookReceiver
	}{{key.Key, byKey}, {admin.Token, bySession}} {
		r := p.Post(t, "/api/fiat/webhook-subs", sub.token, map[string]any{"url": sub.rcv.URL(), "password": admin.Password,
			"events": []string{"user.registered"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}
		defer p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/fiat/webhook-subs/" + r.JSON(t)["id"].(string), Token: admin.Token})
	}
	other := p.Register(t, "not-the-admins")
	about := func(rcv *hookReceiver) bool {
		for _, h := range rcv.all() {
			if strings.Contains(string(h.body), other.ID) {
				return true
			}
		}
		return false
	}
	harness.Eventually(t, 20*time.Second, "the session's all-events endpoint gets the registration", func() bool { return about(bySession) })
	// The dispatcher matched both subscriptions in the same batch.
	time.Sleep(time.Second)
	if about(byKey) {
		t.Fatalf("an endpoint made with an admin's API key received another user's user.registered")
	}
}

// TestAPIKeyEndsWithPasswordRecovery: a key minted before a password reset,
// a password change or "sign out everywhere" answers 401 key_invalid after
// it; minting needs the password (422 without, 403 wrong) and mails the
// owner.
func TestAPIKeyEndsWithPasswordRecovery(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "key-recovery")
	works := func(what string, k apiKey, want int) {
		t.Helper()
		r := p.Get(t, "/api/fiat/wallets", k.Key)
		if r.Status != want {
			t.Fatalf("%s: the key answers %d %s, want %d", what, r.Status, r.Body, want)
		}
	}

	k := createKey(t, p, u, "before-reset", "fiat:read")
	works("before the reset", k, http.StatusOK)
	wantAnswer(t, "forgot", p.Post(t, "/api/auth/password/forgot", "", map[string]string{"email": u.Email}), http.StatusAccepted, "")
	var link string
	harness.Eventually(t, 10*time.Second, "the reset mail", func() bool {
		link = p.LinkInMail(u.Email, "/reset-password?token=")
		return link != ""
	})
	const fresh = "after-reset-Secret-5521"
	wantAnswer(t, "reset", p.Post(t, "/api/auth/password/reset", "",
		map[string]string{"token": harness.LinkToken(t, link), "newPassword": fresh}), http.StatusNoContent, "")
	works("after the reset", k, http.StatusUnauthorized)
	u.Password, u.Token = fresh, mustLogin(t, p, u.Email, fresh, nil)

	k = createKey(t, p, u, "before-change", "fiat:read")
	const changed = "after-change-Secret-5522"
	wantAnswer(t, "change", p.Post(t, "/api/auth/password", u.Token,
		map[string]string{"currentPassword": u.Password, "newPassword": changed}), http.StatusNoContent, "")
	works("after a password change", k, http.StatusUnauthorized)
	u.Password = changed

	k = createKey(t, p, u, "before-sign-out", "fiat:read")
	wantAnswer(t, "sign out everywhere", authDelete(t, p, "/api/auth/sessions", u.Token, nil), http.StatusNoContent, "")
	works("after signing out everywhere", k, http.StatusUnauthorized)
	if r := p.Get(t, "/api/auth/api-keys", u.Token); r.Status != http.StatusOK || strings.Contains(string(r.Body), k.ID) {
		t.Fatalf("the key list after signing out everywhere: %d %s", r.Status, r.Body)
	}

	// Minting needs the password, and the owner is mailed.
	wantAnswer(t, "mint without the password", p.Post(t, "/api/auth/api-keys", u.Token,
		map[string]any{"name": "x", "scopes": []string{"fiat:read"}}), http.StatusUnprocessableEntity, "validation_failed")
	wantAnswer(t, "mint with a wrong password", p.Post(t, "/api/auth/api-keys", u.Token,
		map[string]any{"name": "x", "scopes": []string{"fiat:read"}, "password": "not-the-password"}), http.StatusForbidden, "invalid_credentials")
	harness.Eventually(t, 10*time.Second, "the mailed notice of a new key", func() bool {
		return p.LinkInMail(u.Email, "/api/auth/password/forgot") != ""
	})
}

// enrolledForLimit registers a user with two-factor on and answers the
// secret and a code that is none of the current window's.
func enrolledForLimit(t *testing.T, p *harness.Platform, prefix string) (harness.User, string, string) {
	t.Helper()
	u := p.Register(t, prefix)
	awayFromStepEdge(t)
	secret, _ := enrolTOTP(t, p, u.Token, u.Password)
	wrong := "000000"
	for off := -1; off <= 1; off++ {
		if totpCode(t, secret, off) == wrong {
			wrong = "999999"
		}
	}
	return u, secret, wrong
}

// sameAnswer fails unless a and b are the same status and body.
func sameAnswer(t *testing.T, what string, a, b harness.Response) {
	t.Helper()
	if a.Status != b.Status || string(a.Body) != string(b.Body) {
		t.Fatalf("%s: the answers differ: %d %s vs %d %s", what, a.Status, a.Body, b.Status, b.Body)
	}
}

// TestLoginAnswerShapeWithTwoFactor: for an account with two-factor on, a
// login answers the same whether or not the password was right:
// mfa_required without a code, invalid_credentials with a wrong one.
func TestLoginAnswerShapeWithTwoFactor(t *testing.T) {
	p := shared(t)
	u, _, wrong := enrolledForLimit(t, p, "totp-shape")
	noCodeRight := authLogin(t, p, u.Email, u.Password, nil)
	wantAnswer(t, "no code, right password", noCodeRight, http.StatusUnauthorized, "mfa_required")
	sameAnswer(t, "no code, right and wrong password", noCodeRight, authLogin(t, p, u.Email, "not-the-password", nil))
	rightPw := authLogin(t, p, u.Email, u.Password, map[string]string{"code": wrong})
	wantAnswer(t, "a wrong code, right password", rightPw, http.StatusUnauthorized, "invalid_credentials")
	sameAnswer(t, "a wrong code, right and wrong password", rightPw,
		authLogin(t, p, u.Email, "not-the-password", map[string]string{"code": wrong}))
}

// TestSecondFactorAttemptLimit: after five wrong codes within 15 minutes
// the sixth attempt is 429 rate_limited with Retry-After even with the
// right password and a right code, and so is a sensitive write's code.
func TestSecondFactorAttemptLimit(t *testing.T) {
	p := shared(t)
	u, secret, wrong := enrolledForLimit(t, p, "totp-limit")
	for i := 1; i <= 5; i++ {
		wantAnswer(t, "wrong code "+strconv.Itoa(i), authLogin(t, p, u.Email, u.Password, map[string]string{"code": wrong}),
			http.StatusUnauthorized, "invalid_credentials")
	}
	r := authLogin(t, p, u.Email, u.Password, map[string]string{"code": totpCode(t, secret, 0)})
	wantAnswer(t, "the right code after five wrong ones", r, http.StatusTooManyRequests, "rate_limited")
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 15*60 {
		t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	sameAnswer(t, "locked, right and wrong password", r, authLogin(t, p, u.Email, "not-the-password", map[string]string{"code": wrong}))
	wantAnswer(t, "minting a key while locked", p.Post(t, "/api/auth/api-keys", u.Token,
		map[string]any{"name": "x", "scopes": []string{"fiat:read"}, "password": u.Password, "code": totpCode(t, secret, 1)}),
		http.StatusTooManyRequests, "rate_limited")
}
