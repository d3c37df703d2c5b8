package webhooks

import (
	"net/http"
	"strings"
	"testing"
)

// TestSignWithPreviousSecret: in a rotation's overlap webhook-signature
// carries the new secret's v1 entry and then the previous one's, and the
// spec's X-Platform-Signature stays the new secret's alone.
func TestSignWithPreviousSecret(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"e1"}`)
	only, both, old := http.Header{}, http.Header{}, http.Header{}
	Sign(only, "new-secret-0123456789", "e1", 1700000000, body)
	Sign(both, "new-secret-0123456789", "e1", 1700000000, body, "old-secret-0123456789")
	Sign(old, "old-secret-0123456789", "e1", 1700000000, body)
	// The Standard Webhooks headers are set under their lower-case names.
	sig := func(h http.Header) string { return strings.Join(h[HeaderWebhookSignature], ",") }
	entries := strings.Fields(sig(both))
	if len(entries) != 2 || !strings.HasPrefix(entries[0], "v1,") || entries[0] != sig(only) || entries[1] != sig(old) {
		t.Fatalf("webhook-signature %q; new %q, old %q", sig(both), sig(only), sig(old))
	}
	if both.Get(HeaderSignature) != only.Get(HeaderSignature) {
		t.Fatal("X-Platform-Signature is not the new secret's alone")
	}
}
