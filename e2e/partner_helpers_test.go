package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/e2e/harness"
)

// Secrets the partner e2e platforms are configured with.
const (
	partnerHMAC   = "e2e-partner-webhook-secret-0123456789"
	partnerRights = "e2e-rights-legacy-secret"
	partnerChess  = "e2e-chess-legacy-secret"
	partnerCert   = "e2e-cert-legacy-secret"
)

// Receiver paths.
const (
	rightsHook     = "/api/rights/royalties/verify-webhook"
	chessHook      = "/api/chess/tournament-finalized"
	tournamentHook = "/api/chess/tournaments"
	certHook       = "/api/cert/payouts/certify-webhook"
)

// startPartnerPlatform starts a platform configured with the partner secrets
// (and any extra environment).
func startPartnerPlatform(t *testing.T, extra map[string]string) *harness.Platform {
	t.Helper()
	return startPartner(t, extra)
}

// startPartnerPlatformTB is startPartnerPlatform for benchmarks.
func startPartnerPlatformTB(b *testing.B) *harness.Platform {
	b.Helper()
	return startPartner(b, nil)
}

func startPartner(t testing.TB, extra map[string]string) *harness.Platform {
	t.Helper()
	env := map[string]string{
		"PARTNER_WEBHOOK_SECRET": partnerHMAC,
		"RIGHTS_SECRET":          partnerRights,
		"CHESS_SECRET":           partnerChess,
		"CERT_SECRET":            partnerCert,
	}
	for k, v := range extra {
		env[k] = v
	}
	return harness.Start(t, harness.Options{Env: env})
}

// hmacHeaders signs body the way a partner does: hex HMAC-SHA256 of
// timestamp + "." + body keyed with the shared secret (computed here with
// the standard library, not the platform's code).
func hmacHeaders(body []byte, at time.Time, prefix string) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(partnerHMAC))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return map[string]string{
		"X-Platform-Timestamp": ts,
		"X-Platform-Signature": prefix + hex.EncodeToString(m.Sum(nil)),
	}
}

// deliver posts raw body bytes to a receiver with the given headers.
func deliver(t testing.TB, p *harness.Platform, path string, body []byte, headers map[string]string) harness.Response {
	t.Helper()
	return p.Do(t, harness.Request{Method: http.MethodPost, Path: path, Body: body, Headers: headers})
}

// signedDelivery marshals body and posts it with a fresh HMAC signature.
func signedDelivery(t *testing.T, p *harness.Platform, path string, body any) harness.Response {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return deliver(t, p, path, raw, hmacHeaders(raw, time.Now(), "sha256="))
}

func uniqueID(prefix string) string {
	return prefix + "-" + strings.ToLower(ksuid.New().String())
}

func uniqueEmail(prefix string) string {
	return fmt.Sprintf("%s-%s@example.com", prefix, strings.ToLower(ksuid.New().String()[:12]))
}

// wantStatus fails the test unless r has the status.
func wantStatus(t *testing.T, what string, r harness.Response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	return r.JSON(t)
}

// wantBody fails the test unless r is exactly status with the JSON body.
func wantBody(t *testing.T, what string, r harness.Response, status int, body string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	var got, want any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("%s: body %s", what, r.Body)
	}
	_ = json.Unmarshal([]byte(body), &want)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s: body %s, want %s", what, g, w)
	}
}

// verifiedUser registers a user who has verified their e-mail address, as
// the partner reads require.
func verifiedUser(t *testing.T, p *harness.Platform, prefix string) harness.User {
	t.Helper()
	u := p.Register(t, prefix)
	p.VerifyEmail(t, u)
	return u
}
