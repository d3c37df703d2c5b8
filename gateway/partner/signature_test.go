package partner

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/apierr"
)

func TestSecretsVerify(t *testing.T) {
	t.Parallel()
	const secret = "partner-hmac-secret"
	now := time.Unix(1_750_000_000, 0)
	body := []byte(`{"eventId":"e1","amount":5}`)
	ts := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	sig := func(ts string, b []byte) string { return hex.EncodeToString(Sign([]byte(secret), ts, b)) }
	hmacOnly := Secrets{HMAC: secret, Rights: "legacy-rights", RequireHMAC: true}
	both := Secrets{HMAC: secret, Rights: "legacy-rights"}

	tests := []struct {
		name    string
		secrets Secrets
		d       Delivery
		legacy  string // the receiver's configured legacy secret
		want    string // "" accepted, else the 401 message
	}{
		{"plain hex", hmacOnly, Delivery{Signature: sig(ts(0), body), Timestamp: ts(0), Body: body}, "", ""},
		{"sha256= prefix", hmacOnly, Delivery{Signature: "sha256=" + sig(ts(0), body), Timestamp: ts(0), Body: body}, "", ""},
		{"upper-case prefix and hex", hmacOnly, Delivery{Signature: "SHA256=" + strings.ToUpper(sig(ts(0), body)), Timestamp: ts(0), Body: body}, "", ""},
		{"upper-case hex", hmacOnly, Delivery{Signature: strings.ToUpper(sig(ts(0), body)), Timestamp: ts(0), Body: body}, "", ""},
		{"300 s in the past", hmacOnly, Delivery{Signature: sig(ts(-300*time.Second), body), Timestamp: ts(-300 * time.Second), Body: body}, "", ""},
		{"300 s in the future", hmacOnly, Delivery{Signature: sig(ts(300*time.Second), body), Timestamp: ts(300 * time.Second), Body: body}, "", ""},
		{"301 s in the past", hmacOnly, Delivery{Signature: sig(ts(-301*time.Second), body), Timestamp: ts(-301 * time.Second), Body: body}, "", "timestamp skew"},
		{"301 s in the future", hmacOnly, Delivery{Signature: sig(ts(301*time.Second), body), Timestamp: ts(301 * time.Second), Body: body}, "", "timestamp skew"},
		{"huge timestamp", hmacOnly, Delivery{Signature: sig("9223372036854775807", body), Timestamp: "9223372036854775807", Body: body}, "", "timestamp skew"},
		{"negative timestamp", hmacOnly, Delivery{Signature: sig("-9223372036854775808", body), Timestamp: "-9223372036854775808", Body: body}, "", "timestamp skew"},
		{"timestamp not a number", hmacOnly, Delivery{Signature: sig("soon", body), Timestamp: "soon", Body: body}, "", "bad signature"},
		{"timestamp missing", hmacOnly, Delivery{Signature: sig("", body), Body: body}, "", "bad signature"},
		{"signature missing", hmacOnly, Delivery{Timestamp: ts(0), Body: body}, "", "bad signature"},
		{"signed with another timestamp", hmacOnly, Delivery{Signature: sig(ts(-1), body), Timestamp: ts(0), Body: body}, "", "bad signature"},
		{"body re-serialised", hmacOnly, Delivery{Signature: sig(ts(0), body), Timestamp: ts(0), Body: []byte(`{"amount":5,"eventId":"e1"}`)}, "", "bad signature"},
		{"body with a trailing newline", hmacOnly, Delivery{Signature: sig(ts(0), body), Timestamp: ts(0), Body: append(append([]byte{}, body...), '\n')}, "", "bad signature"},
		{"not hex", hmacOnly, Delivery{Signature: "sha256=zz" + sig(ts(0), body)[2:], Timestamp: ts(0), Body: body}, "", "bad signature"},
		{"truncated", hmacOnly, Delivery{Signature: sig(ts(0), body)[:62], Timestamp: ts(0), Body: body}, "", "bad signature"},
		{"other key", hmacOnly, Delivery{Signature: hex.EncodeToString(Sign([]byte("other"), ts(0), body)), Timestamp: ts(0), Body: body}, "", "bad signature"},
		{"empty HMAC secret never matches", Secrets{}, Delivery{Signature: hex.EncodeToString(Sign(nil, ts(0), body)), Timestamp: ts(0), Body: body}, "", "bad signature"},
		{"legacy header", both, Delivery{Legacy: "legacy-rights", Body: body}, "legacy-rights", ""},
		{"legacy header wrong", both, Delivery{Legacy: "legacy-right", Body: body}, "legacy-rights", "bad signature"},
		{"legacy header disabled by REQUIRE_HMAC", hmacOnly, Delivery{Legacy: "legacy-rights", Body: body}, "legacy-rights", "bad signature"},
		{"empty legacy secret never matches", both, Delivery{Legacy: "", Body: body}, "", "bad signature"},
		{"legacy rescues a stale signature", both, Delivery{Signature: sig(ts(-900*time.Second), body), Timestamp: ts(-900 * time.Second), Legacy: "legacy-rights", Body: body}, "legacy-rights", ""},
		{"stale signature, wrong legacy", both, Delivery{Signature: sig(ts(-900*time.Second), body), Timestamp: ts(-900 * time.Second), Legacy: "nope", Body: body}, "legacy-rights", "timestamp skew"},
		{"nothing at all", both, Delivery{Body: body}, "legacy-rights", "bad signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.secrets.Verify(tt.d, Rail{Legacy: tt.legacy}, now)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("accepted, want 401 %q", tt.want)
			}
			if ae.Status != 401 || ae.Code != "signature_invalid" || ae.Message != tt.want {
				t.Fatalf("got %d %s %q, want 401 signature_invalid %q", ae.Status, ae.Code, ae.Message, tt.want)
			}
			if string(ae.Body()) != `{"error":"signature_invalid","message":"`+tt.want+`"}` {
				t.Fatalf("body %s", ae.Body())
			}
		})
	}
}

// TestSharedSecretOnlyWhileNoRailHasItsOwn: the shared secret opens a rail
// without a key of its own only while no rail has one; once one partner has
// its own key, the shared secret (which that partner holds too) opens no
// rail, in either scheme.
func TestSharedSecretOnlyWhileNoRailHasItsOwn(t *testing.T) {
	t.Parallel()
	const shared = "shared-partner-secret"
	now := time.Unix(1_750_000_000, 0)
	body := []byte(`{"eventId":"e1","amount":5}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	spec := Delivery{Signature: hex.EncodeToString(Sign([]byte(shared), ts, body)), Timestamp: ts, Body: body,
		Method: "POST", Path: "/api/rights/royalties/verify-webhook"}
	v2 := spec
	v2.Signature = SignaturePrefixV2 + hex.EncodeToString(SignV2([]byte(shared), ts, "POST", spec.Path, body))
	alone := Secrets{HMAC: shared, RequireHMAC: true}
	mixed := Secrets{HMAC: shared, ChessHMAC: "chess-own-secret", RequireHMAC: true}
	rights := Rail{}
	for _, d := range []Delivery{spec, v2} {
		if err := alone.Verify(d, rights, now); err != nil {
			t.Fatalf("no rail has its own key: the shared secret refused: %v", err)
		}
		if err := mixed.Verify(d, rights, now); err == nil {
			t.Fatalf("chess has its own key: the shared secret still opens the rights rail (%q)", d.Signature[:3])
		}
	}
}
