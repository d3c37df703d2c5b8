package topics

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/schemas"
)

const testTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestTraceRoundTrips(t *testing.T) {
	sc := ParseTrace(testTraceParent)
	if !sc.IsValid() || !sc.IsSampled() || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("ParseTrace(%q) = %v", testTraceParent, sc)
	}
	if got := FormatTrace(sc); got != testTraceParent {
		t.Fatalf("FormatTrace = %q, want %q", got, testTraceParent)
	}
	r := RawRecord(FiatCommands, "k", "t", "id", []byte(`{}`))
	SetTrace(r, sc)
	SetTrace(r, sc) // replaces, never duplicates
	if n := len(r.Headers); n != 3 {
		t.Fatalf("headers = %v, want type, id and one traceparent", r.Headers)
	}
	if got := TraceOf(r); !got.Equal(sc) {
		t.Fatalf("TraceOf = %v, want %v", got, sc)
	}
	for _, bad := range []string{"", "00-zz-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if ParseTrace(bad).IsValid() || FormatTrace(ParseTrace(bad)) != "" {
			t.Errorf("%q parsed as a trace", bad)
		}
	}
	SetTrace(r, trace.SpanContext{})
	if !TraceOf(r).Equal(sc) {
		t.Fatal("an invalid span context replaced the record's trace")
	}
}

// TestExpandKeepsTheBundlesTrace: the events of a bundle carry the trace
// the bundle record was published with (its first traced command's).
func TestExpandKeepsTheBundlesTrace(t *testing.T) {
	ev, err := schemas.New("ledger.append", "k", "", map[string]any{"a": 1}, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	bundles, err := Bundles(LedgerAppend, []schemas.Envelope{ev, ev}, time.Unix(1_800_000_000, 0))
	if err != nil || len(bundles) != 1 {
		t.Fatalf("bundles: %v %v", bundles, err)
	}
	rec, err := Record(LedgerAppend, bundles[0])
	if err != nil {
		t.Fatal(err)
	}
	SetTraceParent(rec, testTraceParent)
	out, bad := ExpandChecked([]*kgo.Record{rec})
	if len(bad) != 0 || len(out) != 2 {
		t.Fatalf("expanded %d, %d unreadable", len(out), len(bad))
	}
	for _, r := range out {
		if got := Header(r, "traceparent"); got != testTraceParent {
			t.Fatalf("an expanded event's traceparent = %q", got)
		}
	}
}
