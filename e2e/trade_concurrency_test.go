package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestTradeConcurrentTransfers fires 1,000 concurrent transfers among 20
// accounts whose owners live on different partitions of trade.commands.
// A request answered 503 (the reply did not come in time) is retried with
// the same Idempotency-Key, as a client should. Afterwards:
//   - the total of the 20 balances is exactly what was topped up (an
//     integer sum of 10^-7 units): nothing created, nothing lost;
//   - every account's balance is exactly its top-up plus what the accepted
//     transfers brought in minus what they took out;
//   - most transfers were accepted (amounts are small against balances).
func TestTradeConcurrentTransfers(t *testing.T) {
	p := shared(t)
	const accounts, transfers = 20, 1000
	const topUp = int64(100 * 10_000_000) // 100 TNU each
	users := make([]harness.User, accounts)
	ids := make([]string, accounts)
	for i := range users {
		users[i] = p.Register(t, fmt.Sprintf("trade-race%d", i))
		ids[i] = tradeAccount(t, p, users[i])
		r := p.Post(t, "/api/trade/topup", users[i].Token, map[string]any{"accountId": ids[i], "amount": 100})
		if r.Status != http.StatusOK {
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
	rng := rand.New(rand.NewPCG(13, 1000))
	for i := range results {
		from, to := rng.IntN(accounts), rng.IntN(accounts-1)
		if to >= from {
			to++
		}
		// 0.0000001 .. 1.9999999 TNU, with up to 7 decimals.
		results[i] = result{from: from, to: to, units: 1 + rng.Int64N(2*10_000_000-1)}
	}
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: transfers}}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			body := fmt.Sprintf(`{"from":%q,"to":%q,"amount":%s}`, ids[r.from], ids[r.to], unitsText(r.units))
			key := fmt.Sprintf("race-%d-%d", i, time.Now().UnixNano())
			<-start
			for attempt := 0; attempt < 20; attempt++ {
				req, _ := http.NewRequest(http.MethodPost, p.BaseURL+"/api/trade/transfer", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+users[r.from].Token)
				req.Header.Set("Idempotency-Key", key)
				resp, err := client.Do(req)
				if err != nil {
					r.status, r.body = -1, err.Error()
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
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)

	expected := make([]int64, accounts)
	for i := range expected {
		expected[i] = topUp
	}
	accepted := 0
	for i, r := range results {
		switch r.status {
		case http.StatusCreated:
			accepted++
			expected[r.from] -= r.units
			expected[r.to] += r.units
		case http.StatusBadRequest:
			if !strings.Contains(r.body, "insufficient_balance") {
				t.Fatalf("transfer %d: %d %s", i, r.status, r.body)
			}
		default:
			t.Fatalf("transfer %d: %d %s", i, r.status, r.body)
		}
	}
	var total int64
	for i, u := range users {
		got := tradeBalanceUnits(t, p, u)
		if got != expected[i] {
			t.Fatalf("account %d: balance %d units, want %d", i, got, expected[i])
		}
		total += got
	}
	if total != accounts*topUp {
		t.Fatalf("total %d units, want %d", total, accounts*topUp)
	}
	if accepted < transfers*9/10 {
		t.Fatalf("only %d of %d transfers accepted", accepted, transfers)
	}
	t.Logf("%d of %d transfers accepted in %s (%.0f/s); total conserved at %d units", accepted, transfers,
		elapsed.Round(time.Millisecond), float64(transfers)/elapsed.Seconds(), total)
}

// unitsText writes units of 10^-7 as the exact decimal (test-side, so the
// check does not rely on the platform's formatter).
func unitsText(u int64) string {
	s := fmt.Sprintf("%d.%07d", u/10_000_000, u%10_000_000)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
