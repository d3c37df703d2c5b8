package partner

import (
	"encoding/hex"
	"strconv"
	"testing"
	"time"
)

// TestSecretsVerifyPerRail: a rail with its own secret accepts only v2
// signatures made with that secret for its method and path; once some rail
// has its own secret, the shared secret opens no rail, not even one without
// its own (TestSharedSecretOnlyWhileNoRailHasItsOwn).
func TestSecretsVerifyPerRail(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_750_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"eventId":"e1","amount":5}`)
	const path = "/api/rights/royalties/verify-webhook"
	s := Secrets{HMAC: "shared-secret", RightsHMAC: "rights-own", ChessHMAC: "chess-own", RequireHMAC: true}
	rights := s.rail(s.RightsHMAC, "")
	cert := s.rail(s.CertHMAC, "") // no own secret, and the shared one refused
	v2 := func(key, method, p string) string {
		return SignaturePrefixV2 + hex.EncodeToString(SignV2([]byte(key), ts, method, p, body))
	}
	v1 := func(key string) string { return hex.EncodeToString(Sign([]byte(key), ts, body)) }
	tests := []struct {
		name string
		rail Rail
		sig  string
		path string
		ok   bool
	}{
		{"own secret, v2", rights, v2("rights-own", "POST", path), path, true},
		{"own secret, v2, lower-case method signed", rights, v2("rights-own", "post", path), path, true},
		{"own secret, v1 refused", rights, v1("rights-own"), path, false},
		{"shared secret on a rail with its own", rights, v2("shared-secret", "POST", path), path, false},
		{"another partner's secret", rights, v2("chess-own", "POST", path), path, false},
		{"signed for another path", rights, v2("rights-own", "POST", "/api/cert/payouts/certify-webhook"), path, false},
		{"signed for another method", rights, v2("rights-own", "PUT", path), path, false},
		{"shared secret, v1 (spec), on a rail without its own", cert, v1("shared-secret"), path, false},
		{"shared secret, v2, on a rail without its own", cert, v2("shared-secret", "POST", path), path, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := s.Verify(Delivery{Signature: tt.sig, Timestamp: ts, Method: "POST", Path: tt.path, Body: body}, tt.rail, now)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
		})
	}
}
