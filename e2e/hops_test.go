package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/e2e/harness"
)

// TestTransferHops: on a gateway started with LATENCY_HOPS=1, a transfer
// that asks for its hops (Platform-Hops, the benchmark's latency budget)
// gets the nine times its command passed, in their order (the broker's
// acknowledgement may come after the applier's fetch, so it is only
// checked against the produce), all within the request's own span; one
// that does not ask gets none.
func TestTransferHops(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{"LATENCY_HOPS": "1"}})
	send := hopsSender(t, p)
	before := time.Now().UnixNano()
	r := send(true)
	after := time.Now().UnixNano()
	fields := strings.Split(r.Header.Get("Platform-Hops"), ",")
	if len(fields) != 9 {
		t.Fatalf("Platform-Hops = %q, want 9 times", r.Header.Get("Platform-Hops"))
	}
	ts := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < before || v > after {
			t.Fatalf("time %d (%q) is not within the request [%d, %d]: %q", i, f, before, after, fields)
		}
		ts[i] = v
	}
	// accepted, produced, acknowledged, fetched, begun, committed, replied, seen, written
	order := [][2]int{{0, 1}, {1, 2}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}}
	for _, o := range order {
		if ts[o[0]] > ts[o[1]] {
			t.Errorf("time %d (%d) after time %d (%d): %q", o[0], ts[o[0]], o[1], ts[o[1]], fields)
		}
	}
	if got := send(false).Header.Get("Platform-Hops"); got != "" {
		t.Errorf("a transfer that did not ask got Platform-Hops %q", got)
	}
}

// TestTransferHopsOffByDefault: a gateway started without LATENCY_HOPS=1
// answers no times, even to a request that asks (they describe the
// platform's internals, not the caller's data).
func TestTransferHopsOffByDefault(t *testing.T) {
	if got := hopsSender(t, shared(t))(true).Header.Get("Platform-Hops"); got != "" {
		t.Errorf("a gateway without LATENCY_HOPS=1 answered Platform-Hops %q", got)
	}
}

// hopsSender funds a wallet on p and returns a sender of 200-answered
// transfers from it, asking for their hops or not.
func hopsSender(t *testing.T, p *harness.Platform) func(hops bool) harness.Response {
	t.Helper()
	alice, bob := p.Register(t, "hops-a"), p.Register(t, "hops-b")
	aw := fiatCreateWallet(t, p, alice, "KZT")
	fiatCreateWallet(t, p, bob, "KZT")
	fiatDeposit(t, p, fiatSecret(t, p), alice, aw, 500_000)
	harness.Eventually(t, 20*time.Second, "the deposit credited", func() bool { return fiatBalance(t, p, alice, aw) == 500_000 })
	return func(hops bool) harness.Response {
		h := map[string]string{"Idempotency-Key": "k-" + ksuid.New().String()}
		if hops {
			h["Platform-Hops"] = "1"
		}
		r := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: alice.Token,
			Body: map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 1_000}, Headers: h})
		if r.Status != http.StatusOK {
			t.Fatalf("transfer: %d %s", r.Status, r.Body)
		}
		return r
	}
}
