package partner

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
)

// Headers of the inbound partner webhooks (spec: Authentication, item 9).
const (
	HeaderSignature = "X-Platform-Signature"
	HeaderTimestamp = "X-Platform-Timestamp"
	HeaderRights    = "X-Rights-Secret"
	HeaderChess     = "X-Chess-Secret"
	HeaderCert      = "X-Cert-Secret"
)

// MaxSkew is how far X-Platform-Timestamp may lie from the server clock,
// either side (spec: Limits, webhook timestamp tolerance).
const MaxSkew = 300 * time.Second

func errBadSignature() *apierr.Error {
	return apierr.New(http.StatusUnauthorized, schemas.CodeSignatureInvalid, "bad signature")
}

func errTimestampSkew() *apierr.Error {
	return apierr.New(http.StatusUnauthorized, schemas.CodeSignatureInvalid, "timestamp skew")
}

// Secrets configure how the receivers authenticate a delivery.
type Secrets struct {
	// HMAC is PARTNER_WEBHOOK_SECRET, the key of X-Platform-Signature. An
	// empty secret never matches.
	HMAC string
	// Rights, Chess and Cert are the legacy per-receiver secrets
	// (RIGHTS_SECRET, CHESS_SECRET, CERT_SECRET) sent as X-Rights-Secret,
	// X-Chess-Secret and X-Cert-Secret. An empty secret never matches.
	Rights, Chess, Cert string
	// RequireHMAC (WEBHOOK_REQUIRE_HMAC=1) disables the legacy headers.
	RequireHMAC bool
}

// Delivery is what a receiver checks of one request.
type Delivery struct {
	Signature string // X-Platform-Signature
	Timestamp string // X-Platform-Timestamp
	Legacy    string // the receiver's legacy secret header
	Body      []byte // the raw body bytes as received
}

// Verify authenticates a delivery: a valid X-Platform-Signature, the hex
// HMAC-SHA256 keyed with the HMAC secret over timestamp + "." + the raw
// body (with or without a "sha256=" prefix, hex in either case), whose
// timestamp lies within MaxSkew of now; or, unless RequireHMAC, the
// receiver's legacy secret (legacySecret). Secrets are compared in constant
// time. A refusal is 401 signature_invalid with message "timestamp skew"
// when the signature's only fault is its age, else "bad signature".
func (s Secrets) Verify(d Delivery, legacySecret string, now time.Time) error {
	err := s.verifyHMAC(d, now)
	if err == nil {
		return nil
	}
	if !s.RequireHMAC && secretEqual(d.Legacy, legacySecret) {
		return nil
	}
	return err
}

func (s Secrets) verifyHMAC(d Delivery, now time.Time) error {
	sig, ts := strings.TrimSpace(d.Signature), strings.TrimSpace(d.Timestamp)
	if sig == "" || ts == "" {
		return errBadSignature()
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errBadSignature()
	}
	skew := int64(MaxSkew / time.Second)
	if n := now.Unix(); unix < n-skew || unix > n+skew {
		return errTimestampSkew()
	}
	if len(sig) >= 7 && strings.EqualFold(sig[:7], "sha256=") {
		sig = sig[7:]
	}
	got, err := hex.DecodeString(sig)
	if err != nil || s.HMAC == "" {
		return errBadSignature()
	}
	if !hmac.Equal(got, Sign([]byte(s.HMAC), ts, d.Body)) {
		return errBadSignature()
	}
	return nil
}

// Sign returns the HMAC-SHA256 of timestamp + "." + body keyed with secret.
func Sign(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// secretEqual compares a presented secret with the configured one in
// constant time (over their digests, so the length leaks nothing either).
// An empty configured or presented secret never matches.
func secretEqual(got, want string) bool {
	if got == "" || want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return hmac.Equal(g[:], w[:])
}
