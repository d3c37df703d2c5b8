package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// BenchmarkAuthenticatedRequests is the wall time of one authenticated
// request against the real binary, one at a time: GET /api/auth/me and a
// KZT transfer (POST /api/fiat/transfer, answered once the consumer applied
// it). It measures what the session check adds per request when run once
// against a binary without sessions (PLATFORM_BIN of the previous commit)
// and once against this one:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkAuthenticatedRequests -benchtime 300x -count 3
func BenchmarkAuthenticatedRequests(b *testing.B) {
	p := sharedP
	b.Run("me", func(b *testing.B) {
		u := p.Register(b, "bench-me")
		b.ResetTimer()
		for b.Loop() {
			if r := p.Get(b, "/api/auth/me", u.Token); r.Status != http.StatusOK {
				b.Fatalf("me: %d %s", r.Status, r.Body)
			}
		}
	})
	b.Run("transfer", func(b *testing.B) {
		from, to := p.Register(b, "bench-payer"), p.Register(b, "bench-payee")
		wallet := fiatCreateWallet(b, p, from, "KZT")
		fiatCreateWallet(b, p, to, "KZT")
		fiatDeposit(b, p, fiatSecret(b, p), from, wallet, 1_000_000)
		harness.Eventually(b, 30*time.Second, "the deposit credited", func() bool {
			return fiatBalance(b, p, from, wallet) == 1_000_000
		})
		body := map[string]any{"fromWalletId": wallet, "toEmail": to.Email, "amountKzt": 1}
		b.ResetTimer()
		for b.Loop() {
			if r := p.Post(b, "/api/fiat/transfer", from.Token, body); r.Status != http.StatusOK {
				b.Fatalf("transfer: %d %s", r.Status, r.Body)
			}
		}
	})
}
