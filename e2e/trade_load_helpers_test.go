package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// tradeLoad is a set of funded trade accounts and a plan of transfers
// between them with what each got as an answer.
type tradeLoad struct {
	p       *harness.Platform
	users   []harness.User
	ids     []string
	topUp   int64 // units of 10^-7 each account was topped up with
	results []tradeResult
}

type tradeResult struct {
	from, to int
	units    int64
	status   int
	body     string
}

// newTradeLoad opens and tops up n accounts with topUpTNU each, and plans
// transfers random transfers of 1..maxUnits units between distinct ones.
func newTradeLoad(t *testing.T, p *harness.Platform, prefix string, n, topUpTNU, transfers int, seed uint64, maxUnits int64) *tradeLoad {
	t.Helper()
	l := &tradeLoad{p: p, users: make([]harness.User, n), ids: make([]string, n), topUp: int64(topUpTNU) * 10_000_000}
	for i := range l.users {
		l.users[i] = p.Register(t, fmt.Sprintf("%s%d", prefix, i))
		l.ids[i] = tradeAccount(t, p, l.users[i])
		if r := p.Post(t, "/api/trade/topup", l.users[i].Token, map[string]any{"accountId": l.ids[i], "amount": topUpTNU}); r.Status != http.StatusOK {
			t.Fatalf("top-up: %d %s", r.Status, r.Body)
		}
	}
	rng := rand.New(rand.NewPCG(seed, uint64(transfers)))
	l.results = make([]tradeResult, transfers)
	for i := range l.results {
		from, to := rng.IntN(n), rng.IntN(n-1)
		if to >= from {
			to++
		}
		l.results[i] = tradeResult{from: from, to: to, units: 1 + rng.Int64N(maxUnits)}
	}
	return l
}

// send posts transfer i with its Idempotency-Key until an answer other than
// a transport error or a 503 comes, or until passes; onRetry counts the
// re-sends.
func (l *tradeLoad) send(client *http.Client, i int, key string, until time.Time, onRetry func()) {
	r := &l.results[i]
	body := fmt.Sprintf(`{"from":%q,"to":%q,"amount":%s}`, l.ids[r.from], l.ids[r.to], unitsText(r.units))
	for time.Now().Before(until) {
		req, _ := http.NewRequest(http.MethodPost, l.p.BaseURL+"/api/trade/transfer", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+l.users[r.from].Token)
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			r.status, r.body = -1, err.Error()
			onRetry()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		var b json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&b)
		resp.Body.Close()
		r.status, r.body = resp.StatusCode, string(b)
		if resp.StatusCode != http.StatusServiceUnavailable {
			return
		}
		onRetry()
		time.Sleep(100 * time.Millisecond)
	}
}

// check asserts that every answer was a 201 or insufficient_balance, that
// each balance is its top-up plus the accepted transfers in minus out (an
// exact integer sum), and that the total is conserved; it returns how many
// transfers were accepted and the total.
func (l *tradeLoad) check(t *testing.T) (accepted int, total int64) {
	t.Helper()
	expected := make([]int64, len(l.users))
	for i := range expected {
		expected[i] = l.topUp
	}
	for i, r := range l.results {
		switch {
		case r.status == http.StatusCreated:
			accepted++
			expected[r.from] -= r.units
			expected[r.to] += r.units
		case r.status == http.StatusBadRequest && strings.Contains(r.body, "insufficient_balance"):
		default:
			t.Fatalf("transfer %d: %d %s", i, r.status, r.body)
		}
	}
	for i, u := range l.users {
		got := tradeBalanceUnits(t, l.p, u)
		if got != expected[i] {
			t.Fatalf("account %d: balance %d units, want %d (a transfer applied twice or lost)", i, got, expected[i])
		}
		total += got
	}
	if want := int64(len(l.users)) * l.topUp; total != want {
		t.Fatalf("total %d units, want %d", total, want)
	}
	return accepted, total
}

// unitsText writes units of 10^-7 as the exact decimal (test-side, so the
// check does not rely on the platform's formatter).
func unitsText(u int64) string {
	s := fmt.Sprintf("%d.%07d", u/10_000_000, u%10_000_000)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
