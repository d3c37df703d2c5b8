package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// ringLoad is a ring of near-empty wallets through which transfers go hop
// by hop, each sent once the one before it was acknowledged: a wallet can
// pay its hop only with what the hop before brought. The wallets sit on
// different partitions of fiat.commands, so a restore that re-applies the
// hops partition by partition, in another order, must reproduce their
// outcomes rather than decide them again (issue 43: re-decided, most were
// refused insufficient_balance).
type ringLoad struct {
	l       *drillLoad
	users   []harness.User
	wallets []string
	amount  int64
	// told is what each hop was answered, by key; sent its request.
	told map[string][]byte
	sent map[string]ringHop
}

type ringHop struct {
	token string
	body  []byte
}

// newRing funds a ring of n wallets: the first holds one hop and the fees
// of rounds hops, the others the fees only. Its wallets join l's, so l's
// checks (every acknowledged transfer once, money conserved, one ledger
// entry each) cover the ring's transfers too.
func (l *drillLoad) newRing(t *testing.T, n, rounds int, amount int64) *ringLoad {
	t.Helper()
	secret := fiatSecret(t, l.p)
	r := &ringLoad{l: l, amount: amount, told: map[string][]byte{}, sent: map[string]ringHop{}}
	fees := int64(rounds) * schemas.TransferFee(amount)
	for i := 0; i < n; i++ {
		u := l.p.Register(t, fmt.Sprintf("ring%d", i))
		w := fiatCreateWallet(t, l.p, u, "KZT")
		funds := fees
		if i == 0 {
			funds += amount
		}
		fiatDeposit(t, l.p, secret, u, w, funds)
		r.users, r.wallets = append(r.users, u), append(r.wallets, w)
		l.wallets, l.funded = append(l.wallets, w), l.funded+funds
	}
	return r
}

// send sends rounds times around the ring, hop by hop, each retried with
// its key until answered 200.
func (r *ringLoad) send(t *testing.T, prefix string, rounds int) {
	t.Helper()
	for round := 0; round < rounds; round++ {
		for i := range r.users {
			j := (i + 1) % len(r.users)
			key := fmt.Sprintf("%s-%d-%d", prefix, round, i)
			body, _ := json.Marshal(map[string]any{"fromWalletId": r.wallets[i], "toEmail": r.users[j].Email,
				"amountKzt": r.amount, "memo": key})
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				status, raw, err := postKeyed(r.l.client, r.l.p.BaseURL+"/api/fiat/transfer", r.users[i].Token, key, body)
				if err == nil && status == http.StatusOK {
					r.l.mu.Lock()
					r.l.acked[key] = time.Now()
					r.told[key], r.sent[key] = raw, ringHop{token: r.users[i].Token, body: body}
					r.l.mu.Unlock()
					break
				}
				if (err == nil && status < 500) || time.Now().After(deadline) {
					t.Fatalf("ring hop %s: %d %s %v", key, status, raw, err)
				}
			}
		}
	}
}

// checkTold sends every hop again with its key: each is answered what it
// was answered the first time, byte for byte.
func (r *ringLoad) checkTold(t *testing.T) {
	t.Helper()
	for key, hop := range r.sent {
		status, raw, err := postKeyed(r.l.client, r.l.p.BaseURL+"/api/fiat/transfer", hop.token, key, hop.body)
		if err != nil || status != http.StatusOK || !bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(r.told[key])) {
			t.Errorf("ring hop %s: answered 200 %s the first time, %d %s %v after the restore", key, r.told[key], status, raw, err)
		}
	}
}

// tradeRing is the same ring on trade.commands (keyed by account): one
// account holds one hop's units, the others a unit each.
type tradeRing struct {
	p        *harness.Platform
	users    []harness.User
	accounts []string
	told     map[string]harness.Response
	sent     map[string]ringHop
}

// newTradeRing opens n accounts and tops each up (the first with one TNU
// more), so that the trade group stores a position on each account's
// partition before the backup.
func newTradeRing(t *testing.T, p *harness.Platform, n int) *tradeRing {
	t.Helper()
	r := &tradeRing{p: p, told: map[string]harness.Response{}, sent: map[string]ringHop{}}
	for i := 0; i < n; i++ {
		u := p.Register(t, fmt.Sprintf("tring%d", i))
		a := tradeAccount(t, p, u)
		amount := "0.0000001"
		if i == 0 {
			amount = "1.0000001"
		}
		if res := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/trade/topup", Token: u.Token,
			Body: `{"accountId":"` + a + `","amount":` + amount + `}`}); res.Status != http.StatusOK {
			t.Fatalf("trade top-up: %d %s", res.Status, res.Body)
		}
		r.users, r.accounts = append(r.users, u), append(r.accounts, a)
	}
	return r
}

// send moves one TNU around the ring rounds times, hop by hop.
func (r *tradeRing) send(t *testing.T, prefix string, rounds int) {
	t.Helper()
	for round := 0; round < rounds; round++ {
		for i := range r.users {
			j := (i + 1) % len(r.users)
			key := fmt.Sprintf("%s-%d-%d", prefix, round, i)
			hop := ringHop{token: r.users[i].Token, body: []byte(`{"from":"` + r.accounts[i] + `","to":"` + r.accounts[j] + `","amount":1}`)}
			res := r.do(t, key, hop)
			if res.Status != http.StatusCreated {
				t.Fatalf("trade ring hop %s: %d %s", key, res.Status, res.Body)
			}
			r.told[key], r.sent[key] = res, hop
		}
	}
}

func (r *tradeRing) do(t *testing.T, key string, hop ringHop) harness.Response {
	t.Helper()
	return r.p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/trade/transfer", Token: hop.token,
		Body: hop.body, Headers: map[string]string{"Idempotency-Key": key}})
}

// checkTold sends every hop again with its key: each is answered what it
// was answered the first time, byte for byte, and the balances are those
// the ring leaves.
func (r *tradeRing) checkTold(t *testing.T) {
	t.Helper()
	for key, hop := range r.sent {
		res := r.do(t, key, hop)
		if res.Status != r.told[key].Status || !bytes.Equal(res.Body, r.told[key].Body) {
			t.Errorf("trade ring hop %s: answered %d %s the first time, %d %s after the restore", key,
				r.told[key].Status, r.told[key].Body, res.Status, res.Body)
		}
	}
	for i, u := range r.users {
		want := int64(1)
		if i == 0 {
			want += 10_000_000
		}
		if got := tradeBalanceUnits(t, r.p, u); got != want {
			t.Errorf("trade ring account %d: %d units after the restore, want %d", i, got, want)
		}
	}
}
