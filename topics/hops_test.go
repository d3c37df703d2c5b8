package topics

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestStampHops(t *testing.T) {
	rec := &kgo.Record{Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("x")}}}
	if HopsOf(rec) != nil {
		t.Fatal("hops on a record without the header")
	}
	StampHops(rec, 1)
	StampHops(rec, 2, -3, 1<<62)
	if got := HopsOf(rec); !slices.Equal(got, []int64{1, 2, -3, 1 << 62}) {
		t.Fatalf("hops %v", got)
	}
	if len(rec.Headers) != 2 || rec.Headers[0].Key != "traceparent" {
		t.Fatalf("headers %v", rec.Headers)
	}
}
