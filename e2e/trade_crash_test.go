package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestTradeTransfersSurviveCrash kills the platform (SIGKILL) while 300
// transfers among 6 accounts are in flight, restarts it, and lets every
// client retry with its Idempotency-Key until it gets an answer. Each
// transfer is applied exactly once: every balance equals its top-up plus
// the accepted transfers in minus out, and the total is conserved.
func TestTradeTransfersSurviveCrash(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{"COMMAND_TIMEOUT": "2s"}})
	const accounts, transfers = 6, 300
	const topUp = int64(50 * 10_000_000)
	users := make([]harness.User, accounts)
	ids := make([]string, accounts)
	for i := range users {
		users[i] = p.Register(t, fmt.Sprintf("trade-crash%d", i))
		ids[i] = tradeAccount(t, p, users[i])
		if r := p.Post(t, "/api/trade/topup", users[i].Token, map[string]any{"accountId": ids[i], "amount": 50}); r.Status != http.StatusOK {
			t.Fatalf("top-up: %d %s", r.Status, r.Body)
		}
	}
	type result struct {
		from, to int
		units    int64
		status   int
		body     string
	}
	results := make([]result, transfers)
	rng := rand.New(rand.NewPCG(7, 300))
	for i := range results {
		from, to := rng.IntN(accounts), rng.IntN(accounts-1)
		if to >= from {
			to++
		}
		results[i] = result{from: from, to: to, units: 1 + rng.Int64N(10_000_000)}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	var retried atomic.Int64
	var wg sync.WaitGroup
	var fired sync.WaitGroup
	fired.Add(transfers / 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			body := fmt.Sprintf(`{"from":%q,"to":%q,"amount":%s}`, ids[r.from], ids[r.to], unitsText(r.units))
			key := fmt.Sprintf("crash-%d", i)
			if i < transfers/2 {
				defer fired.Done()
			} else {
				time.Sleep(time.Duration(i%50) * 10 * time.Millisecond)
			}
			deadline := time.Now().Add(90 * time.Second)
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodPost, p.BaseURL+"/api/trade/transfer", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+users[r.from].Token)
				req.Header.Set("Idempotency-Key", key)
				resp, err := client.Do(req)
				if err != nil {
					retried.Add(1)
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
				retried.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	fired.Wait()
	p.Kill()
	p.Restart()
	wg.Wait()

	expected := make([]int64, accounts)
	for i := range expected {
		expected[i] = topUp
	}
	for i, r := range results {
		switch {
		case r.status == http.StatusCreated:
			expected[r.from] -= r.units
			expected[r.to] += r.units
		case r.status == http.StatusBadRequest && strings.Contains(r.body, "insufficient_balance"):
		default:
			t.Fatalf("transfer %d: %d %s", i, r.status, r.body)
		}
	}
	var total int64
	for i, u := range users {
		got := tradeBalanceUnits(t, p, u)
		if got != expected[i] {
			t.Fatalf("account %d: %d units, want %d (a transfer applied twice or lost)", i, got, expected[i])
		}
		total += got
	}
	if total != accounts*topUp {
		t.Fatalf("total %d, want %d", total, accounts*topUp)
	}
	t.Logf("%d retries across the crash; total conserved at %d units", retried.Load(), total)
}
