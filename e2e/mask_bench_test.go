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

// BenchmarkMaskCharges measures charge authorizations per second through
// HTTP against the real binary (rate limits disabled by the harness), with
// p50/p99 latency, on many masks and on one hot mask. The charges of one
// mask are serialized by design (one partition, one consumer, in order);
// the hot-mask figure shows what that costs. Run:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkMaskCharges -benchtime 3000x
func BenchmarkMaskCharges(b *testing.B) {
	p := sharedP
	const concurrency = 64
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}

	for _, bc := range []struct {
		name  string
		masks int
	}{{"many-masks", 100}, {"hot-mask", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			u := p.Register(b, "mask-bench")
			ids := make([]string, bc.masks)
			for i := range ids {
				r := p.Post(b, "/api/mask/masks", u.Token, map[string]any{"kind": "category-locked",
					"lockedToCategory": "bench", "spendLimitCents": 1_000_000_000_000})
				if r.Status != http.StatusCreated {
					b.Fatalf("create mask: %d %s", r.Status, r.Body)
				}
				ids[i] = r.JSON(b)["id"].(string)
			}
			run := fmt.Sprintf("%s-%d", bc.name, time.Now().UnixNano())
			latencies := make([]time.Duration, b.N)
			var next atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range concurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						body := chargeBody(ids[i%len(ids)], fmt.Sprintf("%s-%d", run, i), 1, "Shop", "bench")
						t0 := time.Now()
						status, raw, err := rawPost(client, p.BaseURL+"/api/mask/charges", u.Token, body)
						latencies[i] = time.Since(t0)
						if err != nil || status != http.StatusCreated {
							failed.Store(fmt.Sprintf("charge %d: %d %s %v", i, status, raw, err))
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
			sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
			pct := func(q float64) float64 {
				return float64(latencies[min(len(latencies)-1, int(q*float64(len(latencies))))].Microseconds()) / 1000
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "auth/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}
