package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// BenchmarkGovBallots measures ballots per second on one open proposal
// through HTTP against the real binary, 64 clients, each ballot from its
// own user (registered before the timer starts), with p50/p99 latency. A
// ballot is one transaction that share-locks the proposal, inserts the
// ballot and its gov-voter outbox row, and recounts every ballot for the
// answer's tallyNow. Run:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkGovBallots -benchtime 500x
func BenchmarkGovBallots(b *testing.B) {
	p := sharedP
	const concurrency = 64
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	admin := p.RegisterEmail(b, harness.GovAdminEmail)
	for _, mode := range []struct {
		name   string
		create map[string]any
		ballot func(i int) map[string]any
	}{
		{"yes-no-abstain", map[string]any{"voteMode": "yes-no-abstain"},
			func(i int) map[string]any { return map[string]any{"choice": []string{"yes", "no", "abstain"}[i%3]} }},
		{"ranked-choice", map[string]any{"voteMode": "ranked-choice", "options": []string{"A", "B", "C", "D"}},
			func(i int) map[string]any {
				return map[string]any{"ranking": [][]string{{"A", "B", "C", "D"}, {"B", "C", "D", "A"}, {"C", "D", "A", "B"}}[i%3]}
			}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			users := make([]harness.User, b.N)
			var wg sync.WaitGroup
			var next atomic.Int64
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
						users[i] = p.Register(b, "gov-bench")
					}
				}()
			}
			wg.Wait()
			body := map[string]any{"title": "bench", "category": "bench"}
			for k, v := range mode.create {
				body[k] = v
			}
			r := p.Post(b, "/api/gov/proposals", admin.Token, body)
			if r.Status != http.StatusCreated {
				b.Fatalf("create: %d %s", r.Status, r.Body)
			}
			id := r.JSON(b)["id"].(string)
			if r := p.Post(b, "/api/gov/proposals/"+id+"/open", admin.Token, map[string]any{}); r.Status != http.StatusOK {
				b.Fatalf("open: %d %s", r.Status, r.Body)
			}
			latencies := make([]time.Duration, b.N)
			var failed atomic.Value
			next.Store(0)
			b.ResetTimer()
			start := time.Now()
			for range concurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
						t0 := time.Now()
						status, raw, err := rawPost(client, p.BaseURL+"/api/gov/proposals/"+id+"/votes", users[i].Token, mode.ballot(i))
						latencies[i] = time.Since(t0)
						if err != nil || status != http.StatusCreated {
							failed.Store(fmt.Sprintf("ballot %d: %d %s %v", i, status, raw, err))
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
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ballots/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			if r := p.Post(b, "/api/gov/proposals/"+id+"/close", admin.Token, map[string]any{}); r.Status != http.StatusOK {
				b.Fatalf("close: %d %s", r.Status, r.Body)
			}
		})
	}
}
