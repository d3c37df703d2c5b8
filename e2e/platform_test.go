package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
)

func TestVersionAndHealth(t *testing.T) {
	p := shared(t)
	v := p.Get(t, "/api/platform/version", "").JSON(t)
	for _, k := range []string{"service", "status", "version", "release", "runtime", "environment", "startedAt", "uptimeSeconds"} {
		if _, ok := v[k]; !ok {
			t.Errorf("version lacks %s: %v", k, v)
		}
	}
	for _, path := range []string{"/api/platform/health", "/api/auth/health"} {
		h := p.Get(t, path, "")
		if h.Status != http.StatusOK || h.JSON(t)["database"] != "ok" {
			t.Errorf("%s: %d %s", path, h.Status, h.Body)
		}
	}
	idx := p.Get(t, "/api/platform/openapi.json", "").JSON(t)
	mods, _ := idx["modules"].([]any)
	if len(mods) < 4 || idx["platform"] == nil {
		t.Errorf("index = %v", idx)
	}
	full := p.Get(t, "/api/openapi.json", "").JSON(t)
	paths, _ := full["paths"].(map[string]any)
	for _, want := range []string{"/api/fiat/transfer", "/api/mask/charges", "/api/ledger/chain/verify", "/api/reputation/leaderboard"} {
		if paths[want] == nil {
			t.Errorf("/api/openapi.json lacks %s", want)
		}
	}
	// Metrics are served on their own loopback listener, not on the API port.
	if m := p.Get(t, "/metrics", ""); m.Status != http.StatusNotFound {
		t.Fatalf("API port serves /metrics: %d %.300s", m.Status, m.Body)
	}
	resp, err := http.Get("http://" + p.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	mb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(mb), "platform_http_requests_total") {
		t.Fatalf("metrics listener: %d %.600s", resp.StatusCode, mb)
	}
}

func TestCrossCuttingHTTP(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{"RATE_LIMIT_AUTH": "3", "RATE_LIMIT_READ": "100"}})

	r := p.Get(t, "/api/no/such/route", "")
	if r.Status != http.StatusNotFound || r.JSON(t)["error"] != "not_found" {
		t.Fatalf("unknown route: %d %s", r.Status, r.Body)
	}
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit", "X-Request-Id"} {
		if r.Header.Get(h) == "" {
			t.Errorf("404 lacks header %s", h)
		}
	}

	// Announce a body over the 1 MiB limit and read the answer without
	// sending it: the server refuses on the Content-Length alone.
	status, header, body := announceBody(t, p.BaseURL, http.MethodPost, "/api/auth/register", "", 2<<20)
	if status != http.StatusBadRequest || !strings.Contains(body, `"payload_too_large"`) {
		t.Fatalf("big body: %d %s", status, body)
	}
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit"} {
		if header.Get(h) == "" {
			t.Errorf("payload_too_large lacks header %s", h)
		}
	}

	// The auth class allows 3 per minute per IP; the 4th is refused.
	var last harness.Response
	for i := 0; i < 4; i++ {
		last = p.Post(t, "/api/auth/login", "", map[string]string{"email": "x@example.com", "password": "whatever1"})
	}
	if last.Status != http.StatusTooManyRequests || last.JSON(t)["error"] != "rate_limited" || last.Header.Get("Retry-After") == "" {
		t.Fatalf("4th login: %d %s %v", last.Status, last.Body, last.Header)
	}
	if last.Header.Get("RateLimit-Remaining") != "0" || last.Header.Get("RateLimit-Limit") != "3" {
		t.Fatalf("headers: %v", last.Header)
	}
}

// TestEmbeddedKafkaSurvivesRestart registers a user (its event goes through
// the outbox to events.identity), restarts the platform, and reads the event
// back from the embedded broker over TCP.
func TestEmbeddedKafkaSurvivesRestart(t *testing.T) {
	p := harness.Start(t, harness.Options{})
	u := p.Register(t, "persist")
	harness.Eventually(t, 10*time.Second, "user.registered on events.identity", func() bool {
		return countEvents(t, p.KafkaAddr, u.ID) == 1
	})
	p.Stop()
	p.Restart()
	if n := countEvents(t, p.KafkaAddr, u.ID); n != 1 {
		t.Fatalf("after restart found %d events for the user, want 1", n)
	}
}

// postHeadersOnly sends only the headers of a JSON POST announcing length bytes and
// returns the status and body of the answer.

func countEvents(t *testing.T, addr, key string) int {
	t.Helper()
	cl, err := topics.NewClient([]string{addr},
		kgo.ConsumeTopics(topics.EventsIdentity), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	n := 0
	for ctx.Err() == nil {
		f := cl.PollFetches(ctx)
		f.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == key {
				n++
			}
		})
	}
	return n
}
