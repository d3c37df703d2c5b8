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

// BenchmarkBuildPartnerList measures partner API list reads (limit 50, city
// filter, 50 matching open vacancies) through HTTP against the real binary,
// 8 concurrent clients, with p50/p99 latency. Run:
//
//	go test ./e2e/ -run '^$' -bench BenchmarkBuildPartnerList -benchtime 2000x
func BenchmarkBuildPartnerList(b *testing.B) {
	p := sharedP
	const concurrency = 8
	city := buildCity("Benchburg")
	var key string
	for e := 0; e < 10; e++ {
		u := p.Register(b, "build-bench")
		if key == "" {
			_, key = buildKey(b, p, u)
		}
		proj := buildProject(b, p, u, "bench")
		for i := 0; i < 5; i++ {
			buildVacancy(b, p, u, proj, map[string]any{"city": city, "title": fmt.Sprintf("Bench %d-%d", e, i)})
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	url := p.BaseURL + "/api/build/public/v1/vacancies?limit=50&city=" + city
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("X-Build-Key", key)
				t0 := time.Now()
				resp, err := client.Do(req)
				lat[i] = time.Since(t0)
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d requests failed", failed.Load())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
