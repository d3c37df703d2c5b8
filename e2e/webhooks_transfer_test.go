package e2e

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// transferKzt moves amount from the sender's wallet to the recipient's
// e-mail through the real fiat API and returns the transaction id.
func transferKzt(t *testing.T, p *harness.Platform, from harness.User, walletID, toEmail string, amount int64) string {
	t.Helper()
	r := p.Post(t, "/api/fiat/transfer", from.Token, map[string]any{"fromWalletId": walletID, "toEmail": toEmail, "amountKzt": amount})
	if r.Status != http.StatusOK {
		t.Fatalf("transfer: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["transactionId"].(string)
}

// fundedPair registers a sender with a funded KZT wallet and a recipient
// with a KZT wallet. It skips when the fiat module does not serve wallets.
func fundedPair(t *testing.T, p *harness.Platform, amount int64) (from, to harness.User, fromWallet, toWallet string) {
	t.Helper()
	from, to = p.Register(t, "payer"), p.Register(t, "payee")
	if r := p.Post(t, "/api/fiat/wallets", from.Token, map[string]string{"currency": "KZT"}); r.Status != http.StatusCreated {
		t.Fatalf("the fiat module does not create wallets here (%d); transfer webhooks are covered with produced events", r.Status)
	} else {
		fromWallet = r.JSON(t)["id"].(string)
	}
	toWallet = fiatCreateWallet(t, p, to, "KZT")
	fiatDeposit(t, p, fiatSecret(t, p), from, fromWallet, amount)
	return from, to, fromWallet, toWallet
}

// A real transfer reaches the endpoints of both sides: the sender as the
// event's actor, the recipient as the owner of toWallet.
func TestWebhooksTransferReachesBothSides(t *testing.T) {
	p := shared(t)
	from, to, fromWallet, toWallet := fundedPair(t, p, 1_000_000)
	fromRcv, toRcv := newHookReceiver(t), newHookReceiver(t)
	subscribeWebhook(t, p, from, fromRcv.URL(), hookSecret, []string{"transfer.completed"})
	subscribeWebhook(t, p, to, toRcv.URL(), hookSecret2, []string{"transfer.completed"})

	tx := transferKzt(t, p, from, fromWallet, to.Email, 10_000)
	find := func(r *hookReceiver) *hookHit {
		for _, h := range r.all() {
			if d, _ := payloadOf(t, h)["data"].(map[string]any); d["txId"] == tx {
				return &h
			}
		}
		return nil
	}
	harness.Eventually(t, 15*time.Second, "both sides' deliveries", func() bool { return find(fromRcv) != nil && find(toRcv) != nil })
	for _, c := range []struct {
		hit    *hookHit
		secret string
	}{{find(fromRcv), hookSecret}, {find(toRcv), hookSecret2}} {
		body := payloadOf(t, *c.hit)
		data := body["data"].(map[string]any)
		if !verify(*c.hit, c.secret) || body["type"] != "transfer.completed" || body["module"] != "fiat" ||
			data["fromWallet"] != fromWallet || data["toWallet"] != toWallet || data["amountKzt"] != float64(10_000) {
			t.Fatalf("delivery %s", c.hit.body)
		}
	}
}

// TestWebhooksHangingReceiverDoesNotDelayTransfers measures transfer
// latency without webhooks and then with both sides subscribed to an
// endpoint that never answers: the money path must not wait for it.
func TestWebhooksHangingReceiverDoesNotDelayTransfers(t *testing.T) {
	p := shared(t)
	from, to, fromWallet, _ := fundedPair(t, p, 10_000_000)
	const n = 30
	measure := func() []time.Duration {
		var out []time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			transferKzt(t, p, from, fromWallet, to.Email, 100)
			out = append(out, time.Since(start))
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	base := measure()

	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hang.Close() })
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	fromSub := subscribeWebhook(t, p, from, hang.URL, hookSecret, nil)
	toSub := subscribeWebhook(t, p, to, hang.URL, hookSecret, nil)
	hung := measure()
	// The measurement means something only if those deliveries were queued
	// for the hanging endpoint meanwhile (none can have succeeded).
	harness.Eventually(t, 10*time.Second, "deliveries queued for the hanging endpoint", func() bool {
		return len(deliveriesOf(t, p, admin, fromSub.ID)) >= n && len(deliveriesOf(t, p, admin, toSub.ID)) >= n
	})
	for _, d := range deliveriesOf(t, p, admin, fromSub.ID) {
		if d.Status == "delivered" {
			t.Fatalf("a delivery to the hanging endpoint succeeded: %+v", d)
		}
	}

	pct := func(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	t.Logf("transfer latency over %d sequential transfers: without webhooks p50 %s p95 %s max %s; "+
		"with both sides subscribed to a never-answering endpoint p50 %s p95 %s max %s",
		n, pct(base, .5), pct(base, .95), base[n-1], pct(hung, .5), pct(hung, .95), hung[n-1])
	// Deliveries time out after 10 s; a money path that waited on them
	// would show it in every transfer.
	if pct(hung, .5) > 2*pct(base, .5)+100*time.Millisecond || hung[n-1] > 3*time.Second {
		t.Fatalf("transfers slowed down with a hanging webhook receiver: p50 %s -> %s, max %s",
			pct(base, .5), pct(hung, .5), hung[n-1])
	}
}
