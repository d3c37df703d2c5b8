package topics

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
)

// TestBundlesExpandToTheirEvents: events packed into bundles come back from
// Expand as the records they would have been alone (value, key, type and
// id headers), in order, across bundles split by size; a record that is not
// a bundle is returned as is.
func TestBundlesExpandToTheirEvents(t *testing.T) {
	now := time.Now()
	var events []schemas.Envelope
	big := strings.Repeat("x", 40<<10)
	for i := 0; i < 20; i++ {
		env, err := schemas.New(schemas.TypeScoreUpdated, schemas.NewID(), "", map[string]any{"i": i, "pad": big}, now)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, env)
	}
	bundles, err := Bundles(EventsReputation, events, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(bundles) < 3 {
		t.Fatalf("%d bundles for 800 KiB of events, want them split under %d bytes", len(bundles), MaxBundleBytes)
	}
	var got []*kgo.Record
	for _, b := range bundles {
		rec, err := Record(EventsReputation, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Value) > MaxBundleBytes+64<<10 || string(rec.Key) != EventsReputation {
			t.Fatalf("bundle of %d bytes keyed %q", len(rec.Value), rec.Key)
		}
		rec.Partition, rec.Offset = 3, 7
		got = append(got, Expand(rec)...)
	}
	if len(got) != len(events) {
		t.Fatalf("%d events expanded, want %d", len(got), len(events))
	}
	for i, r := range got {
		want, err := Record(EventsReputation, events[i])
		if err != nil {
			t.Fatal(err)
		}
		env, err := schemas.Read(r.Value)
		if err != nil || env.ID != events[i].ID || !bytes.Equal(env.Data, events[i].Data) ||
			!bytes.Equal(r.Key, want.Key) || Header(r, "id") != events[i].ID || Header(r, "type") != schemas.TypeScoreUpdated ||
			r.Topic != EventsReputation || r.Partition != 3 || r.Offset != 7 {
			t.Fatalf("event %d expanded to %s %q %v (%v)", i, r.Key, r.Headers, env.ID, err)
		}
	}
	plain, err := Record(EventsFiat, events[0])
	if err != nil {
		t.Fatal(err)
	}
	if out := Expand(plain); len(out) != 1 || out[0] != plain {
		t.Fatal("a plain record is not returned as is")
	}
	if b := BundledTopics(); !b[EventsLedger] || !b[EventsReputation] || !b[LedgerAppend] || b[EventsFiat] || len(b) != 3 {
		t.Fatalf("bundled topics %v", b)
	}
}

// BenchmarkExpandAll is what every event reader does first with a batch of
// 100 records, none a bundle
// (go test -run '^$' -bench ExpandAll -benchmem ./topics).
func BenchmarkExpandAll(b *testing.B) {
	recs := make([]*kgo.Record, 100)
	for i := range recs {
		id := schemas.NewID()
		recs[i] = RawRecord(EventsFiat, "wal_"+id, schemas.TypeTransferCompleted, id, []byte(`{}`))
	}
	b.ReportAllocs()
	for b.Loop() {
		if out := ExpandAll(recs); len(out) != len(recs) {
			b.Fatalf("%d records out of %d", len(out), len(recs))
		}
	}
}

func TestHeaderIsAgreesWithHeader(t *testing.T) {
	rec := RawRecord(EventsFiat, "k", schemas.TypeEventBundle, "id1", nil)
	for _, c := range []struct{ key, value string }{
		{"type", schemas.TypeEventBundle}, {"type", schemas.TypeTransferCompleted}, {"type", ""},
		{"id", "id1"}, {"absent", ""}, {"absent", "x"},
	} {
		if got, want := HeaderIs(rec, c.key, c.value), Header(rec, c.key) == c.value; got != want {
			t.Errorf("HeaderIs(%q, %q) = %v, Header says %v", c.key, c.value, got, want)
		}
	}
}
