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
	// HMAC is PARTNER_WEBHOOK_SECRET, the key shared by the three rails
	// (the spec's scheme), used only while no rail has a secret of its own
	// (sharedOpens). An empty secret never matches.
	HMAC string
	// RightsHMAC, ChessHMAC and CertHMAC are each partner's own key
	// (RIGHTS_WEBHOOK_SECRET, CHESS_WEBHOOK_SECRET, CERT_WEBHOOK_SECRET).
	// A rail with its own key accepts only v2 signatures, which cover the
	// method and path: a delivery signed for one route cannot be replayed
	// on another, nor one partner's on another's rail.
	RightsHMAC, ChessHMAC, CertHMAC string
	// Rights, Chess and Cert are the legacy per-receiver secrets
	// (RIGHTS_SECRET, CHESS_SECRET, CERT_SECRET) sent as X-Rights-Secret,
	// X-Chess-Secret and X-Cert-Secret. An empty secret never matches.
	Rights, Chess, Cert string
	// RequireHMAC (WEBHOOK_REQUIRE_HMAC=1) disables the legacy headers.
	RequireHMAC bool
}

// Rail is one partner's secrets: its own HMAC key (empty: the shared one)
// and its legacy header secret.
type Rail struct {
	HMAC, Legacy string
}

// sharedOpens reports whether the shared PARTNER_WEBHOOK_SECRET opens a
// rail without a secret of its own: only while no rail has one. Once one
// partner has its own key the partners are distinct parties, and the
// shared secret (which every partner holds) would let one post records on
// another's rail; a rail left without its own key then refuses every HMAC
// delivery until it gets one.
func (s Secrets) sharedOpens() bool {
	return s.RightsHMAC == "" && s.ChessHMAC == "" && s.CertHMAC == ""
}

// rail picks a rail's secrets.
func (s Secrets) rail(own, legacy string) Rail { return Rail{HMAC: own, Legacy: legacy} }

// Delivery is what a receiver checks of one request.
type Delivery struct {
	Signature string // X-Platform-Signature
	Timestamp string // X-Platform-Timestamp
	Legacy    string // the receiver's legacy secret header
	Method    string // the request method, as sent
	Path      string // the request path, without the query
	Body      []byte // the raw body bytes as received
}

// SignaturePrefixV2 marks a signature over timestamp, method, path and body.
const SignaturePrefixV2 = "v2="

// Verify authenticates a delivery to rail r:
//   - v2 (`X-Platform-Signature: v2=<hex>`): the HMAC-SHA256 over
//     timestamp + "." + METHOD + "." + path + "." + raw body (SignV2),
//     keyed with the rail's own secret, or the shared one when the rail
//     has none;
//   - the spec's scheme (hex, with or without "sha256="): the HMAC over
//     timestamp + "." + raw body keyed with the shared secret, accepted
//     only on a rail without a secret of its own;
//   - unless RequireHMAC, the rail's legacy secret header.
//
// The timestamp must lie within MaxSkew of now. Secrets and digests are
// compared in constant time. A refusal is 401 signature_invalid with
// message "timestamp skew" when the signature's only fault is its age,
// else "bad signature".
func (s Secrets) Verify(d Delivery, r Rail, now time.Time) error {
	err := s.verifyHMAC(d, r, now)
	if err == nil {
		return nil
	}
	if !s.RequireHMAC && secretEqual(d.Legacy, r.Legacy) {
		return nil
	}
	return err
}

func (s Secrets) verifyHMAC(d Delivery, r Rail, now time.Time) error {
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
	v2 := len(sig) >= len(SignaturePrefixV2) && strings.EqualFold(sig[:len(SignaturePrefixV2)], SignaturePrefixV2)
	switch {
	case v2:
		sig = sig[len(SignaturePrefixV2):]
	case len(sig) >= 7 && strings.EqualFold(sig[:7], "sha256="):
		sig = sig[7:]
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return errBadSignature()
	}
	key := r.HMAC
	if key == "" && s.sharedOpens() {
		key = s.HMAC
	}
	var want []byte
	switch {
	case key == "":
		return errBadSignature()
	case v2:
		want = SignV2([]byte(key), ts, d.Method, d.Path, d.Body)
	case r.HMAC != "":
		// A rail with its own secret takes only signatures that name the
		// route.
		return errBadSignature()
	default:
		want = Sign([]byte(key), ts, d.Body)
	}
	if !hmac.Equal(got, want) {
		return errBadSignature()
	}
	return nil
}

// Sign returns the HMAC-SHA256 of timestamp + "." + body keyed with secret
// (the spec's scheme).
func Sign(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SignV2 returns the HMAC-SHA256 of the v2 base string, timestamp + "." +
// method (upper case) + "." + path + "." + body, keyed with secret.
func SignV2(secret []byte, timestamp, method, path string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	for _, part := range []string{timestamp, strings.ToUpper(method), path} {
		m.Write([]byte(part))
		m.Write([]byte{'.'})
	}
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
