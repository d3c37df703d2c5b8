package webhooks

import (
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
)

// TestOwnerDeliveryHidesProbeDetail: what an owner reads of a failed
// attempt says nothing about the host beyond "no successful answer": not
// the dial error (refused, unreachable, reset, TLS) and not how long it
// took; an HTTP answer of the owner's endpoint is shown as it is.
func TestOwnerDeliveryHidesProbeDetail(t *testing.T) {
	t.Parallel()
	ms := func(n int) *int { return &n }
	code := func(n int) *int { return &n }
	base := store.Delivery{ID: "d", WebhookID: "w", EventID: "e", Type: "t", Status: store.StatusFailed, Attempts: 1,
		CreatedAt: time.Unix(1_750_000_000, 0)}
	refusals := []string{
		"Post \"https://203.0.113.5:22/\": dial tcp 203.0.113.5:22: connect: connection refused",
		"Post \"https://203.0.113.5:8443/\": dial tcp 203.0.113.5:8443: connect: no route to host",
		"Post \"https://203.0.113.5/\": tls: first record does not look like a TLS handshake",
		"Post \"https://203.0.113.5/\": read tcp 10.0.0.2:5555->203.0.113.5:443: read: connection reset by peer",
		"no answer within 10s",
	}
	seen := map[string]bool{}
	for _, e := range refusals {
		d := base
		d.LastError, d.LastDurationMs = e, ms(3)
		got := ownerDeliveryJSON(d)
		if got.LastError == nil || strings.Contains(*got.LastError, "203.0.113.5") || got.LastDurationMs != nil {
			t.Fatalf("%q shown as %v after %v ms", e, got.LastError, got.LastDurationMs)
		}
		seen[*got.LastError] = true
	}
	if len(seen) != 1 {
		t.Fatalf("failures told apart for the owner: %v", seen)
	}
	d := base
	d.LastError, d.LastDurationMs = schemas.WebhookErrBlocked, ms(0)
	if got := ownerDeliveryJSON(d); *got.LastError != schemas.WebhookReasonBlocked {
		t.Fatalf("blocked: %v", *got.LastError)
	}
	d = base
	d.LastError, d.LastStatusCode, d.LastDurationMs = "endpoint answered 500", code(500), ms(42)
	if got := ownerDeliveryJSON(d); *got.LastError != "endpoint answered 500" || got.LastDurationMs == nil || *got.LastDurationMs != 42 {
		t.Fatalf("an HTTP answer: %v %v", *got.LastError, got.LastDurationMs)
	}
	// The fiat admins' log keeps what was recorded.
	d = base
	d.LastError = refusals[0]
	if got := deliveryToJSON(d); *got.LastError != refusals[0] {
		t.Fatalf("admin log: %v", *got.LastError)
	}
}
