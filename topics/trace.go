package topics

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// A request's trace crosses Kafka in the W3C traceparent record header,
// read and written by OpenTelemetry's own propagator through kotel's record
// carrier. The gateway's command producer runs kotel's hooks (a publish
// span per command); consumers read the header of each record (TraceOf)
// and put it on what the record causes: its reply (SetTrace), its event
// log rows (FormatTrace), and through them the events the relay publishes.

var traceContext propagation.TraceContext

// TraceOf returns the span context in r's traceparent header; it is not
// valid when r has none (or a malformed one).
func TraceOf(r *kgo.Record) trace.SpanContext {
	if !hasHeader(r, "traceparent") {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(traceContext.Extract(context.Background(), kotel.NewRecordCarrier(r)))
}

// SetTrace puts sc on r as its traceparent header; an invalid sc leaves r
// as it is.
func SetTrace(r *kgo.Record, sc trace.SpanContext) {
	if !sc.IsValid() {
		return
	}
	traceContext.Inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), kotel.NewRecordCarrier(r))
}

// SetTraceParent puts a stored traceparent (FormatTrace) on r as its
// header; "" leaves r as it is.
func SetTraceParent(r *kgo.Record, traceparent string) {
	if traceparent != "" {
		kotel.NewRecordCarrier(r).Set("traceparent", traceparent)
	}
}

// FormatTrace is sc as a traceparent header value, "" when sc is not valid:
// the form the event log stores.
func FormatTrace(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

// ParseTrace is the span context of a stored traceparent; not valid for ""
// or a malformed value.
func ParseTrace(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(traceContext.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": traceparent}))
}

func hasHeader(r *kgo.Record, key string) bool {
	for _, h := range r.Headers {
		if h.Key == key {
			return true
		}
	}
	return false
}
