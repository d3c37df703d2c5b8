package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/topics"
)

// TestLogLinesCarryTheTraceID: a line logged with a context in a trace
// names it as traceId, also through With; one without names none.
func TestLogLinesCarryTheTraceID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(traceLogHandler{slog.NewJSONHandler(&buf, nil)}).With("component", "x")
	sc := topics.ParseTrace("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	log.InfoContext(trace.ContextWithRemoteSpanContext(context.Background(), sc), "traced")
	log.InfoContext(context.Background(), "untraced")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("logged %q", buf.String())
	}
	var traced, untraced map[string]any
	if json.Unmarshal(lines[0], &traced) != nil || json.Unmarshal(lines[1], &untraced) != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	if traced["traceId"] != "4bf92f3577b34da6a3ce929d0e0e4736" || traced["component"] != "x" {
		t.Errorf("traced line = %v", traced)
	}
	if _, ok := untraced["traceId"]; ok {
		t.Errorf("untraced line = %v", untraced)
	}
}

// TestTracingEndpointMustBeAURL refuses an OTLP endpoint that is no http(s)
// URL at start, not at the first export.
func TestTracingEndpointMustBeAURL(t *testing.T) {
	for _, bad := range []string{"collector:4318", "ftp://x", "http://"} {
		if _, err := newTracerProvider(context.Background(), Config{TraceEndpoint: bad, TraceRatio: 1}, "run"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	tp, err := newTracerProvider(context.Background(), Config{TraceEndpoint: "http://127.0.0.1:4318", TraceRatio: 1}, "run")
	if err != nil {
		t.Fatal(err)
	}
	_ = tp.Shutdown(context.Background())
}
