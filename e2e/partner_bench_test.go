package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPartnerReceivers measures signed royalty deliveries per second
// through HTTP against the real binary (each one a Postgres transaction with
// its outbox event), with p50/p99 latency: "new" records a fresh eventId
// each time, "replay" repeats one eventId (the idempotent path). Run:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkPartnerReceivers -benchtime 2000x
func BenchmarkPartnerReceivers(b *testing.B) {
	p := startPartnerPlatformTB(b)
	const concurrency = 16
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	for _, bc := range []struct {
		name   string
		replay bool
		status int
	}{{"new", false, http.StatusCreated}, {"replay", true, http.StatusOK}} {
		b.Run(bc.name, func(b *testing.B) {
			run := uniqueID("bench")
			if bc.replay {
				raw, _ := json.Marshal(map[string]any{"eventId": run, "email": "bench@example.com", "productKey": "p", "period": "q", "amount": 1})
				if r := deliver(b, p, rightsHook, raw, hmacHeaders(raw, time.Now(), "")); r.Status != http.StatusCreated {
					b.Fatalf("seed: %d %s", r.Status, r.Body)
				}
			}
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
						id := run
						if !bc.replay {
							id = fmt.Sprintf("%s-%d", run, i)
						}
						raw, _ := json.Marshal(map[string]any{"eventId": id, "email": "bench@example.com", "productKey": "p", "period": "q", "amount": 1})
						req, _ := http.NewRequest(http.MethodPost, p.BaseURL+rightsHook, bytes.NewReader(raw))
						req.Header.Set("Content-Type", "application/json")
						for k, v := range hmacHeaders(raw, time.Now(), "sha256=") {
							req.Header.Set(k, v)
						}
						t0 := time.Now()
						resp, err := client.Do(req)
						latencies[i] = time.Since(t0)
						if err != nil {
							failed.Store(err.Error())
							continue
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != bc.status {
							failed.Store(fmt.Sprintf("delivery %d: %d %s", i, resp.StatusCode, body))
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
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}
