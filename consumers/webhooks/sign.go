package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/fintech/platform/schemas"
)

// Signature headers of a delivery.
const (
	HeaderSignature = "X-Platform-Signature"
	HeaderTimestamp = "X-Platform-Timestamp"
	// Standard Webhooks (standardwebhooks.com) headers.
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// Sign sets the signature headers of a delivery of body for event id at
// unix time ts, keyed with the endpoint secret:
//
//   - X-Platform-Timestamp: ts; X-Platform-Signature: "sha256=" + hex of
//     HMAC-SHA256(secret, ts + "." + body) (the spec's scheme);
//   - webhook-id: id; webhook-timestamp: ts; webhook-signature: "v1," +
//     base64 of HMAC-SHA256(secret, id + "." + ts + "." + body).
//
// The key is schemas.WebhookKey(secret): the decoded bytes of a whsec_
// secret (one the server minted), which off-the-shelf verifiers take as
// it is; otherwise the secret's own bytes, which they take as "whsec_" +
// base64(secret).
//
// During a rotation's overlap, previous holds the replaced secret: the
// Standard Webhooks header then carries one space-separated "v1," entry per
// secret, the new one first, so a receiver verifies with either; the
// spec's X-Platform-Signature carries the new secret's only.
func Sign(h http.Header, secret, id string, ts int64, body []byte, previous ...string) {
	key := schemas.WebhookKey(secret)
	t := strconv.FormatInt(ts, 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(t + "."))
	mac.Write(body)
	h.Set(HeaderTimestamp, t)
	h.Set(HeaderSignature, "sha256="+hex.EncodeToString(mac.Sum(nil)))

	sig := standardSignature(key, id, t, body)
	for _, p := range previous {
		sig += " " + standardSignature(schemas.WebhookKey(p), id, t, body)
	}
	h[HeaderWebhookID] = []string{id}
	h[HeaderWebhookTimestamp] = []string{t}
	h[HeaderWebhookSignature] = []string{sig}
}

// standardSignature is one Standard Webhooks "v1," entry: the base64
// HMAC-SHA256 of id.timestamp.body under key.
func standardSignature(key []byte, id, t string, body []byte) string {
	std := hmac.New(sha256.New, key)
	std.Write([]byte(id + "." + t + "."))
	std.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(std.Sum(nil))
}
