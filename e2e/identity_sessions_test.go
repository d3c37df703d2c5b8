package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// login posts the credentials (and any extra fields) to /api/auth/login.
func authLogin(t *testing.T, p *harness.Platform, email, password string, extra map[string]string) harness.Response {
	t.Helper()
	body := map[string]string{"email": email, "password": password}
	for k, v := range extra {
		body[k] = v
	}
	return p.Post(t, "/api/auth/login", "", body)
}

// mustLogin logs in and returns the token of the new session.
func mustLogin(t *testing.T, p *harness.Platform, email, password string, extra map[string]string) string {
	t.Helper()
	r := authLogin(t, p, email, password, extra)
	if r.Status != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, r.Status, r.Body)
	}
	return r.JSON(t)["token"].(string)
}

// wantStatus fails unless r has status (and, when code is set, that error code).
func wantAnswer(t *testing.T, what string, r harness.Response, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.JSON(t)["error"] != code) {
		t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
	}
}

func authDelete(t *testing.T, p *harness.Platform, path, token string, body any) harness.Response {
	t.Helper()
	return p.Do(t, harness.Request{Method: http.MethodDelete, Path: path, Token: token, Body: body})
}

// sessionList answers GET /api/auth/sessions as id → current.
func sessionList(t *testing.T, p *harness.Platform, token string) map[string]bool {
	t.Helper()
	r := p.Get(t, "/api/auth/sessions", token)
	wantAnswer(t, "sessions", r, http.StatusOK, "")
	var out struct {
		Items []struct {
			ID, CreatedAt, LastSeenAt, IP, UserAgent string
			Current                                  bool
		} `json:"items"`
	}
	r.Decode(t, &out)
	m := map[string]bool{}
	for _, s := range out.Items {
		if s.IP == "" || s.CreatedAt == "" || s.LastSeenAt == "" {
			t.Fatalf("session without its login facts: %+v", s)
		}
		m[s.ID] = s.Current
	}
	return m
}

// currentSession is the id of the token's own session.
func currentSession(t *testing.T, p *harness.Platform, token string) string {
	t.Helper()
	var cur []string
	for id, c := range sessionList(t, p, token) {
		if c {
			cur = append(cur, id)
		}
	}
	if len(cur) != 1 {
		t.Fatalf("%d sessions marked current, want exactly 1", len(cur))
	}
	return cur[0]
}

// TestSessionsLogout: every login is a session; logout ends only the
// caller's (its token answers 401 auth_required, the others go on); a
// session can be ended by id (another user's id is 404) and "everywhere
// else" ends all but the current one.
func TestSessionsLogout(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "sess")
	other := p.Register(t, "sess-other")
	a := u.Token // the registration's session
	b := mustLogin(t, p, u.Email, u.Password, nil)

	list := sessionList(t, p, b)
	if len(list) != 2 {
		t.Fatalf("sessions after register and login = %v, want 2", list)
	}
	aID, bID := currentSession(t, p, a), currentSession(t, p, b)
	if aID == bID || !list[bID] || list[aID] {
		t.Fatalf("current marks wrong: %v (a %s, b %s)", list, aID, bID)
	}

	wantAnswer(t, "logout", p.Post(t, "/api/auth/logout", a, nil), http.StatusNoContent, "")
	wantAnswer(t, "me with the logged-out token", p.Get(t, "/api/auth/me", a), http.StatusUnauthorized, "auth_required")
	wantAnswer(t, "me with the other session", p.Get(t, "/api/auth/me", b), http.StatusOK, "")
	if l := sessionList(t, p, b); len(l) != 1 || !l[bID] {
		t.Fatalf("sessions after logout = %v", l)
	}

	wantAnswer(t, "end an ended session", authDelete(t, p, "/api/auth/sessions/"+aID, b, nil), http.StatusNotFound, "not_found")
	otherID := currentSession(t, p, other.Token)
	wantAnswer(t, "end another user's session", authDelete(t, p, "/api/auth/sessions/"+otherID, b, nil), http.StatusNotFound, "not_found")
	wantAnswer(t, "the other user's session goes on", p.Get(t, "/api/auth/me", other.Token), http.StatusOK, "")

	c := mustLogin(t, p, u.Email, u.Password, nil)
	d := mustLogin(t, p, u.Email, u.Password, nil)
	wantAnswer(t, "end one session by id", authDelete(t, p, "/api/auth/sessions/"+currentSession(t, p, c), b, nil), http.StatusNoContent, "")
	wantAnswer(t, "me with the ended session", p.Get(t, "/api/auth/me", c), http.StatusUnauthorized, "auth_required")
	wantAnswer(t, "end every other session", authDelete(t, p, "/api/auth/sessions", b, nil), http.StatusNoContent, "")
	wantAnswer(t, "me after sign-out elsewhere", p.Get(t, "/api/auth/me", d), http.StatusUnauthorized, "auth_required")
	wantAnswer(t, "the current session goes on", p.Get(t, "/api/auth/me", b), http.StatusOK, "")
	if l := sessionList(t, p, b); len(l) != 1 || !l[bID] {
		t.Fatalf("sessions after ending the others = %v", l)
	}
}

// TestSessionEndedAcrossGateways: two `platform gateway` processes on one
// database; a session ended through the first is refused by the first at
// once and by the second within 5 seconds, though the second had just
// accepted (and cached) it.
func TestSessionEndedAcrossGateways(t *testing.T) {
	b, err := broker.Start(t.TempDir(), harness.FreePort(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	c := harness.NewCluster(t, strings.Join(b.Addrs(), ","), nil)
	c.Run("migrate")
	gw1, gw2 := c.Gateway(), c.Gateway()

	u := gw1.Register(t, "two-gw")
	tok := mustLogin(t, gw1, u.Email, u.Password, nil)
	wantAnswer(t, "me on the second gateway", gw2.Get(t, "/api/auth/me", tok), http.StatusOK, "")
	wantAnswer(t, "logout on the first gateway", gw1.Post(t, "/api/auth/logout", tok, nil), http.StatusNoContent, "")
	wantAnswer(t, "me on the first gateway right after", gw1.Get(t, "/api/auth/me", tok), http.StatusUnauthorized, "auth_required")
	ended := time.Now()
	harness.Eventually(t, 5*time.Second, "the second gateway refuses the ended session", func() bool {
		return gw2.Get(t, "/api/auth/me", tok).Status == http.StatusUnauthorized
	})
	t.Logf("the second gateway refused the ended session after %s", time.Since(ended).Round(time.Millisecond))
	wantAnswer(t, "the registration session goes on", gw2.Get(t, "/api/auth/me", u.Token), http.StatusOK, "")
}

// TestPasswordChange: a wrong current password is 403 invalid_credentials,
// a common password is refused, and a change ends every other session.
func TestPasswordChange(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "pwchange")
	other := mustLogin(t, p, u.Email, u.Password, nil)
	const fresh = "a-new-Secret-9931"

	wantAnswer(t, "wrong current password", p.Post(t, "/api/auth/password", u.Token,
		map[string]string{"currentPassword": "not-the-password", "newPassword": fresh}), http.StatusForbidden, "invalid_credentials")
	r := p.Post(t, "/api/auth/password", u.Token, map[string]string{"currentPassword": u.Password, "newPassword": "password1"})
	wantAnswer(t, "a common password", r, http.StatusUnprocessableEntity, "validation_failed")
	if !strings.Contains(string(r.Body), "most common") {
		t.Fatalf("common password answer = %s", r.Body)
	}
	wantAnswer(t, "a common password at registration", p.Post(t, "/api/auth/register", "",
		map[string]string{"email": "common-" + harness.NewID() + "@example.com", "password": "iloveyou"}), http.StatusUnprocessableEntity, "validation_failed")

	wantAnswer(t, "change", p.Post(t, "/api/auth/password", u.Token,
		map[string]string{"currentPassword": u.Password, "newPassword": fresh}), http.StatusNoContent, "")
	wantAnswer(t, "the changing session goes on", p.Get(t, "/api/auth/me", u.Token), http.StatusOK, "")
	wantAnswer(t, "another session ended", p.Get(t, "/api/auth/me", other), http.StatusUnauthorized, "auth_required")
	wantAnswer(t, "the old password", authLogin(t, p, u.Email, u.Password, nil), http.StatusUnauthorized, "invalid_credentials")
	mustLogin(t, p, u.Email, fresh, nil)
}

// TestPasswordReset: forgot answers the same for a known and an unknown
// address; the mailed link opens a page with a form under the CSP; the
// token sets a new password once, ends every session, and a used or unknown
// token is 400 verification_invalid.
func TestPasswordReset(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "pwreset")
	known := p.Post(t, "/api/auth/password/forgot", "", map[string]string{"email": u.Email})
	unknown := p.Post(t, "/api/auth/password/forgot", "", map[string]string{"email": "nobody-" + harness.NewID() + "@example.com"})
	wantAnswer(t, "forgot, known address", known, http.StatusAccepted, "")
	wantAnswer(t, "forgot, unknown address", unknown, http.StatusAccepted, "")
	if string(known.Body) != string(unknown.Body) {
		t.Fatalf("forgot bodies differ: %s vs %s", known.Body, unknown.Body)
	}

	var link string
	harness.Eventually(t, 10*time.Second, "the reset mail", func() bool {
		link = p.LinkInMail(u.Email, "/reset-password?token=")
		return link != ""
	})
	if !strings.HasPrefix(link, p.BaseURL+"/reset-password?token=") {
		t.Fatalf("link = %s", link)
	}
	page := p.Get(t, strings.TrimPrefix(link, p.BaseURL), "")
	if page.Status != http.StatusOK || !strings.Contains(string(page.Body), "<form") ||
		!strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'nonce-") {
		t.Fatalf("reset page: %d %v %s", page.Status, page.Header, page.Body)
	}
	token := link[strings.Index(link, "token=")+len("token="):]

	const fresh = "reset-Secret-4471"
	wantAnswer(t, "reset to a common password", p.Post(t, "/api/auth/password/reset", "",
		map[string]string{"token": token, "newPassword": "qwertyuiop"}), http.StatusUnprocessableEntity, "validation_failed")
	wantAnswer(t, "reset", p.Post(t, "/api/auth/password/reset", "",
		map[string]string{"token": token, "newPassword": fresh}), http.StatusNoContent, "")
	wantAnswer(t, "every session ended", p.Get(t, "/api/auth/me", u.Token), http.StatusUnauthorized, "auth_required")
	wantAnswer(t, "the token again", p.Post(t, "/api/auth/password/reset", "",
		map[string]string{"token": token, "newPassword": "reset-Secret-4472"}), http.StatusBadRequest, "verification_invalid")
	wantAnswer(t, "an unknown token", p.Post(t, "/api/auth/password/reset", "",
		map[string]string{"token": "not-a-token", "newPassword": fresh}), http.StatusBadRequest, "verification_invalid")
	wantAnswer(t, "the old password", authLogin(t, p, u.Email, u.Password, nil), http.StatusUnauthorized, "invalid_credentials")
	mustLogin(t, p, u.Email, fresh, nil)
}

// totpCode is the code of secret for the step offset steps from now.
func totpCode(t *testing.T, secret string, offset int) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, time.Now().Add(time.Duration(offset)*30*time.Second),
		totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// awayFromStepEdge waits until the current 30-second step has at least 12
// seconds left, so that codes of the steps around "now" stay within the
// server's ±1 window for the rest of the test.
func awayFromStepEdge(t *testing.T) {
	t.Helper()
	harness.Eventually(t, 20*time.Second, "a fresh TOTP step", func() bool { return time.Now().Unix()%30 < 18 })
}

// enrolTOTP turns two-factor on for the token's user (whose password is
// password) with a code of the previous step and returns the secret and the
// recovery codes.
func enrolTOTP(t *testing.T, p *harness.Platform, token, password string) (string, []string) {
	t.Helper()
	r := p.Post(t, "/api/auth/mfa/totp", token, map[string]string{"password": password})
	wantAnswer(t, "enrol", r, http.StatusOK, "")
	en := r.JSON(t)
	secret := en["secret"].(string)
	if !strings.HasPrefix(en["otpauthUrl"].(string), "otpauth://totp/") || !strings.Contains(en["otpauthUrl"].(string), "secret="+secret) {
		t.Fatalf("enrolment = %v", en)
	}
	wrong := "000000"
	if totpCode(t, secret, -1) == wrong || totpCode(t, secret, 0) == wrong || totpCode(t, secret, 1) == wrong {
		wrong = "999999"
	}
	wantAnswer(t, "confirm with a wrong code", p.Post(t, "/api/auth/mfa/totp/confirm", token, map[string]string{"code": wrong}),
		http.StatusBadRequest, "verification_invalid")
	r = p.Post(t, "/api/auth/mfa/totp/confirm", token, map[string]string{"code": totpCode(t, secret, -1)})
	wantAnswer(t, "confirm", r, http.StatusOK, "")
	var out struct {
		RecoveryCodes []string `json:"recoveryCodes"`
	}
	r.Decode(t, &out)
	if len(out.RecoveryCodes) != 10 {
		t.Fatalf("recovery codes = %v", out.RecoveryCodes)
	}
	return secret, out.RecoveryCodes
}

// TestTOTP: enrol and confirm, then login needs a second factor (401
// mfa_required without); a current code logs in once (its replay is
// refused); each recovery code works once; /me shows mfaEnabled; disabling
// needs a fresh code.
func TestTOTP(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "totp")
	if me := p.Get(t, "/api/auth/me", u.Token).JSON(t); me["mfaEnabled"] != false {
		t.Fatalf("me before enrolment = %v", me)
	}
	wantAnswer(t, "enrol without the password", p.Post(t, "/api/auth/mfa/totp", u.Token, map[string]string{}),
		http.StatusUnprocessableEntity, "validation_failed")
	wantAnswer(t, "enrol with a wrong password", p.Post(t, "/api/auth/mfa/totp", u.Token, map[string]string{"password": "not-the-password"}),
		http.StatusForbidden, "invalid_credentials")
	awayFromStepEdge(t)
	secret, recovery := enrolTOTP(t, p, u.Token, u.Password)
	if me := p.Get(t, "/api/auth/me", u.Token).JSON(t); me["mfaEnabled"] != true {
		t.Fatalf("me after enrolment = %v", me)
	}
	wantAnswer(t, "enrol again", p.Post(t, "/api/auth/mfa/totp", u.Token, map[string]string{"password": u.Password}), http.StatusConflict, "invalid_state")

	wantAnswer(t, "login without a code", authLogin(t, p, u.Email, u.Password, nil), http.StatusUnauthorized, "mfa_required")
	wantAnswer(t, "login with the confirming code (a replay)", authLogin(t, p, u.Email, u.Password,
		map[string]string{"code": totpCode(t, secret, -1)}), http.StatusUnauthorized, "invalid_credentials")
	now := totpCode(t, secret, 0)
	mustLogin(t, p, u.Email, u.Password, map[string]string{"code": now})
	wantAnswer(t, "the same code again", authLogin(t, p, u.Email, u.Password, map[string]string{"code": now}),
		http.StatusUnauthorized, "invalid_credentials")

	mustLogin(t, p, u.Email, u.Password, map[string]string{"recoveryCode": strings.ToUpper(recovery[3])})
	wantAnswer(t, "a recovery code twice", authLogin(t, p, u.Email, u.Password, map[string]string{"recoveryCode": recovery[3]}),
		http.StatusUnauthorized, "invalid_credentials")

	wantAnswer(t, "disable with a used code", authDelete(t, p, "/api/auth/mfa/totp", u.Token, map[string]string{"password": u.Password, "code": now}),
		http.StatusForbidden, "invalid_credentials")
	wantAnswer(t, "disable without the password", authDelete(t, p, "/api/auth/mfa/totp", u.Token, map[string]string{"code": totpCode(t, secret, 1)}),
		http.StatusUnprocessableEntity, "validation_failed")
	// Four wrong codes so far (two replays, a used recovery code, a used
	// code to disable): under the limit of five.
	wantAnswer(t, "disable", authDelete(t, p, "/api/auth/mfa/totp", u.Token, map[string]string{"password": u.Password, "code": totpCode(t, secret, 1)}),
		http.StatusNoContent, "")
	if me := p.Get(t, "/api/auth/me", u.Token).JSON(t); me["mfaEnabled"] != false {
		t.Fatalf("me after disabling = %v", me)
	}
	mustLogin(t, p, u.Email, u.Password, nil)
}

// TestAdminNeedsMFAInProduction: in production an admin's routes (a fiat
// admin route and the console's data) answer 403 mfa_required until the
// admin turns two-factor on; `platform admin create` says how.
func TestAdminNeedsMFAInProduction(t *testing.T) {
	const email = "mfa-admin@security.example.com"
	p := harness.Start(t, harness.Options{Production: true, Env: map[string]string{"FIAT_ADMIN_EMAILS": email}})
	const password = "operator-chosen-pass-2"
	out, err := adminCmd(t, p, password+"\n", "create", email)
	if err != nil || !strings.Contains(out, "/api/auth/mfa/totp") || !strings.Contains(out, "mfa_required") {
		t.Fatalf("admin create: %v %s", err, out)
	}
	tok := mustLogin(t, p, email, password, nil)
	for _, path := range []string{"/api/fiat/admin/audit", "/api/platform/admin/deliveries"} {
		wantAnswer(t, path+" without two-factor", p.Get(t, path, tok), http.StatusForbidden, "mfa_required")
	}
	awayFromStepEdge(t)
	secret, _ := enrolTOTP(t, p, tok, password)
	tok = mustLogin(t, p, email, password, map[string]string{"code": totpCode(t, secret, 0)})
	for _, path := range []string{"/api/fiat/admin/audit", "/api/platform/admin/deliveries"} {
		wantAnswer(t, path+" with two-factor", p.Get(t, path, tok), http.StatusOK, "")
	}
	wantAnswer(t, "logout", p.Post(t, "/api/auth/logout", tok, nil), http.StatusNoContent, "")
	wantAnswer(t, "the console after logout", p.Get(t, "/api/platform/admin/deliveries", tok), http.StatusUnauthorized, "auth_required")
}

// TestStreamTicketOfEndedSession: an admin event-stream ticket stands for
// the session that minted it; once that session ends (logout), the unused
// ticket opens nothing.
func TestStreamTicketOfEndedSession(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	tok := mustLogin(t, p, admin.Email, admin.Password, nil)
	r := p.Post(t, "/api/fiat/admin/events/ticket", tok, nil)
	wantAnswer(t, "mint a ticket", r, http.StatusCreated, "")
	ticket := r.JSON(t)["ticket"].(string)
	wantAnswer(t, "logout", p.Post(t, "/api/auth/logout", tok, nil), http.StatusNoContent, "")
	wantAnswer(t, "the ticket of the ended session", p.Get(t, "/api/fiat/admin/events?ticket="+ticket, ""),
		http.StatusUnauthorized, "auth_required")
}

// TestStreamEndsWithItsSession: an open admin event stream ends when the
// login session it was opened with ends, whether it was opened with the
// bearer token or with a ticket of that session; a stream of the same
// admin's other session stays open and keeps delivering.
func TestStreamEndsWithItsSession(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	ended := mustLogin(t, p, admin.Email, admin.Password, nil)
	other := mustLogin(t, p, admin.Email, admin.Password, nil)
	r := p.Post(t, "/api/fiat/admin/events/ticket", ended, nil)
	wantAnswer(t, "mint a ticket", r, http.StatusCreated, "")
	byTicket := openStreamAt(t, p, "/api/fiat/admin/events?ticket="+r.JSON(t)["ticket"].(string), "", "")
	byToken := openStream(t, p, ended, "")
	kept := openStream(t, p, other, "")

	wantAnswer(t, "logout", p.Post(t, "/api/auth/logout", ended, nil), http.StatusNoContent, "")
	deadline := time.After(20 * time.Second) // the gateway checks every 5 s
	for name, ch := range map[string]<-chan sseEvent{"the ticket's stream": byTicket, "the token's stream": byToken} {
		for open := true; open; {
			select {
			case _, open = <-ch:
			case <-deadline:
				t.Fatalf("%s is still open 20 s after its session ended", name)
			}
		}
	}
	u := p.Register(t, "after-logout")
	id := produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"txId": "tx-after-logout", "amountKzt": 5})
	awaitIDs(t, kept, id)
}

// TestStreamEndsWithItsAPIKey: a user's event stream opened with a
// restricted API key ends once the key is revoked (the key authenticated
// once, at connect); a stream of another key of the same user keeps
// receiving the user's events.
func TestStreamEndsWithItsAPIKey(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "stream-key")
	revoked := createKey(t, p, u, "revoked-stream", "webhooks:read")
	keptKey := createKey(t, p, u, "kept-stream", "webhooks:read")
	const path = "/api/fiat/me/events/stream"
	byRevoked := openStreamAt(t, p, path, revoked.Key, "")
	kept := openStreamAt(t, p, path, keptKey.Key, "")

	wantAnswer(t, "revoke the key", p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/auth/api-keys/" + revoked.ID, Token: u.Token}),
		http.StatusNoContent, "")
	deadline := time.After(20 * time.Second) // the gateway checks every 5 s
	for open := true; open; {
		select {
		case _, open = <-byRevoked:
		case <-deadline:
			t.Fatal("the revoked key's stream is still open 20 s after the revocation")
		}
	}
	id := produceEvent(t, p, topics.EventsFiat, "transfer.completed", u.ID, map[string]any{"txId": "tx-after-revoke", "amountKzt": 5})
	awaitIDs(t, kept, id)
}
