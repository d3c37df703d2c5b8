package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCharityDonations measures donations per second to one hot
// campaign through HTTP against the real binary (rate limits disabled by
// the harness), 64 clients, each donating 1 minor unit from its own funded
// KZT wallet, with p50/p99 latency. Every donation credits the same
// campaign wallet and total, which the fiat consumer updates once per
// batch. Run:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkCharityDonations -benchtime 3000x -count 3
func BenchmarkCharityDonations(b *testing.B) {
	p := sharedP
	const clients = 64
	secret := fiatSecret(b, p)
	camp := charityActiveCampaign(b, p, p.Register(b, "bench-organizer"), "bench", 1_000_000_000)
	type donor struct{ token, wallet string }
	donors := make([]donor, clients)
	for i := range donors {
		u, w := charityFundedDonor(b, p, secret, fmt.Sprintf("bench-donor-%d", i), 10_000_000)
		donors[i] = donor{u.Token, w}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	url := p.BaseURL + "/api/charity/campaigns/" + camp.ID + "/donations"

	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := donors[c]
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				status, raw, err := rawPost(client, url, d.token, map[string]any{"walletId": d.wallet, "amountKzt": 1})
				latencies[i] = time.Since(t0)
				if err != nil || status != http.StatusCreated {
					failed.Store(fmt.Sprintf("donation %d: %d %s %v", i, status, raw, err))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if msg := failed.Load(); msg != nil {
		b.Fatal(msg)
	}
	if got := charityGet(b, p, camp.ID, ""); got.Progress.RaisedKzt != int64(b.N) {
		b.Fatalf("raised %d after %d donations of 1", got.Progress.RaisedKzt, b.N)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(q float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(q*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "donations/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
