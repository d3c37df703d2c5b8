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
	entries := strings.Fields(both.Get(HeaderWebhookSignature))
	if len(entries) != 2 || entries[0] != only.Get(HeaderWebhookSignature) || entries[1] != old.Get(HeaderWebhookSignature) {
		t.Fatalf("webhook-signature %q; new %q, old %q", both.Get(HeaderWebhookSignature),
			only.Get(HeaderWebhookSignature), old.Get(HeaderWebhookSignature))
	}
	if both.Get(HeaderSignature) != only.Get(HeaderSignature) {
		t.Fatal("X-Platform-Signature is not the new secret's alone")
	}
}
