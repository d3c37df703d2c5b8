package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/ksuid"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fintech/platform/e2e/harness"
)

// otlpReceiver is an OTLP/HTTP trace collector of the test's own: it
// keeps the name of every span it receives, by trace id.
type otlpReceiver struct {
	mu    sync.Mutex
	spans map[string][]string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				id := hex.EncodeToString(s.TraceId)
				o.spans[id] = append(o.spans[id], s.Name)
			}
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}

// logLinesOfTrace returns the JSON log lines whose traceId is traceID.
func logLinesOfTrace(logs, traceID string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, traceID) {
			continue
		}
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["traceId"] == traceID {
			out = append(out, l)
		}
	}
	return out
}

func hasFields(l map[string]any, fields map[string]string) bool {
	for k, v := range fields {
		if l[k] != v {
			return false
		}
	}
	return true
}

func (o *otlpReceiver) names(traceID string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.spans[traceID])
}

func (o *otlpReceiver) traces() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.spans)
}

// TestOneTracePerRequest sends a transfer with a W3C traceparent and
// follows its trace id through the platform: the gateway answers it in
// its traceparent header; the gateway's access log, the fiat applier, the
// relay and the ledger appender log it as traceId; and the spans an OTLP
// collector receives carry it from the HTTP request through the command's
// publish, the applier's batch and its Postgres statements to the ledger;
// the webhook delivery of its event sends it to the partner.
// Only the sampled caller's trace is exported (OTEL_TRACES_SAMPLER_ARG=0
// samples none of the traces the platform starts itself).
func TestOneTracePerRequest(t *testing.T) {
	rcv := &otlpReceiver{spans: map[string][]string{}}
	collector := httptest.NewServer(rcv)
	defer collector.Close()
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_TRACES_SAMPLER_ARG": "0", "LOG_LEVEL": "debug",
		"SLOW_REQUEST_THRESHOLD": "1ns", "TRACE_URL_TEMPLATE": "http://127.0.0.1:16686/trace/{traceId}"}})
	alice, bob := p.Register(t, "trace-a"), p.Register(t, "trace-b")
	aw := fiatCreateWallet(t, p, alice, "KZT")
	fiatCreateWallet(t, p, bob, "KZT")
	hook := newHookReceiver(t)
	subscribeWebhook(t, p, alice, hook.URL(), hookSecret, []string{"transfer.completed"})
	fiatDeposit(t, p, fiatSecret(t, p), alice, aw, 500_000)
	harness.Eventually(t, 20*time.Second, "the deposit credited", func() bool { return fiatBalance(t, p, alice, aw) == 500_000 })

	traceID, spanID := make([]byte, 16), make([]byte, 8)
	_, _ = rand.Read(traceID)
	_, _ = rand.Read(spanID)
	tid := hex.EncodeToString(traceID)
	tr := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: alice.Token,
		Body: map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 1_000, "memo": "traced"},
		Headers: map[string]string{"Idempotency-Key": "k-" + ksuid.New().String(),
			"traceparent": "00-" + tid + "-" + hex.EncodeToString(spanID) + "-01"}})
	if tr.Status != http.StatusOK {
		t.Fatalf("transfer: %d %s", tr.Status, tr.Body)
	}
	if got := tr.Header.Get("traceparent"); !strings.HasPrefix(got, "00-"+tid+"-") {
		t.Fatalf("the answer's traceparent = %q, want trace %s", got, tid)
	}

	// Each part of the path logs the trace id on its own line.
	want := map[string]map[string]string{
		"gateway access log": {"msg": "http", "route": "/api/fiat/transfer"},
		"fiat applier":       {"msg": "command applied", "group": "fiat-applier", "type": "fiat.transfer"},
		"relay, the event":   {"msg": "event published", "component": "relay", "type": "transfer.completed"},
		"relay, the ledger":  {"msg": "event published", "component": "relay", "topic": "ledger.append"},
		"ledger appender":    {"msg": "command applied", "group": "ledger-appender"},
	}
	harness.Eventually(t, 30*time.Second, "the trace id in every part's log", func() bool {
		lines := logLinesOfTrace(p.Logs(), tid)
		for name, fields := range want {
			if !slices.ContainsFunc(lines, func(l map[string]any) bool { return hasFields(l, fields) }) {
				t.Logf("not logged yet: %s", name)
				return false
			}
		}
		return true
	})

	// The console lists it among the slow requests (every one is, at a 1 ns
	// threshold), linked to the tracing UI by its trace id.
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	var slow struct {
		Items []struct {
			Route, TraceID string
			TraceURL       *string
		}
	}
	p.Get(t, "/api/platform/admin/slow-requests", admin.Token).Decode(t, &slow)
	if !slices.ContainsFunc(slow.Items, func(r struct {
		Route, TraceID string
		TraceURL       *string
	}) bool {
		return r.Route == "/api/fiat/transfer" && r.TraceID == tid && r.TraceURL != nil &&
			*r.TraceURL == "http://127.0.0.1:16686/trace/"+tid
	}) {
		t.Errorf("the console's slow requests do not name the transfer's trace: %+v", slow.Items)
	}

	// The webhook delivery of its transfer.completed sends the trace on.
	harness.Eventually(t, 30*time.Second, "the transfer.completed delivery", func() bool { return len(hook.all()) > 0 })
	if got := hook.all()[0].header.Get("traceparent"); !strings.HasPrefix(got, "00-"+tid+"-") {
		t.Errorf("the webhook delivery's traceparent = %q, want trace %s", got, tid)
	}

	// The spans, exported in batches (every 5 s by default).
	wantSpans := []string{"POST /api/fiat/transfer", "fiat.commands publish", "fiat-applier apply", "ledger-appender apply"}
	harness.Eventually(t, 30*time.Second, "the request's spans at the collector", func() bool {
		names := rcv.names(tid)
		for _, w := range wantSpans {
			if !slices.Contains(names, w) {
				t.Logf("no span %q yet; the trace has %q (%d traces received)", w, names, rcv.traces())
				return false
			}
		}
		// and at least one Postgres statement under the applier's batch
		return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "batch") || strings.HasPrefix(n, "query") })
	})
	t.Logf("spans of trace %s: %v", tid, rcv.names(tid))
	if n := rcv.traces(); n != 1 {
		t.Errorf("the collector received %d traces; with OTEL_TRACES_SAMPLER_ARG=0 only the caller's sampled one is exported", n)
	}
}
