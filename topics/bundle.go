package topics

import (
	"fmt"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
)

// BundledTopics returns the topics whose emitted events travel in bundles.
func BundledTopics() map[string]bool {
	out := map[string]bool{}
	for _, s := range All() {
		if s.Bundled {
			out[s.Name] = true
		}
	}
	return out
}

// MaxBundleBytes bounds the encoded events of one bundle record, well
// under the broker's and the producer's one-megabyte record limit.
const MaxBundleBytes = 256 << 10

// Expand returns the records of the events rec carries: rec itself, or one
// record per event of a bundle, with the bundle's topic, partition, offset
// and timestamp and the event's own key, value and type/id headers, as if
// each had been produced alone. What does not read is left out: readers of
// events skip what they cannot read, as they do any unreadable record. A
// reader that must not lose anything (a command runner) uses ExpandChecked.
func Expand(rec *kgo.Record) []*kgo.Record {
	out, _ := expand(rec, nil)
	return out
}

// ExpandAll is Expand over a batch of records, in order.
func ExpandAll(recs []*kgo.Record) []*kgo.Record {
	out, _ := ExpandChecked(recs)
	return out
}

// Unreadable is what a bundle held that does not read: the bundle record
// itself when its event list does not decode, or the record of one of its
// events (its raw value, with the bundle's topic, partition and offset)
// when that event carries no readable id, type and key.
type Unreadable struct {
	Rec *kgo.Record
	Err error
}

// ExpandChecked is ExpandAll that also returns what did not read, so that
// the caller parks it instead of losing it without a trace.
func ExpandChecked(recs []*kgo.Record) ([]*kgo.Record, []Unreadable) {
	out := make([]*kgo.Record, 0, len(recs))
	var bad []Unreadable
	for _, rec := range recs {
		out, bad = expand(rec, bad, out...)
	}
	return out, bad
}

// expand appends rec's records to out and what does not read to bad.
func expand(rec *kgo.Record, bad []Unreadable, out ...*kgo.Record) ([]*kgo.Record, []Unreadable) {
	if !HeaderIs(rec, "type", schemas.TypeEventBundle) {
		return append(out, rec), bad
	}
	env, err := schemas.Read(rec.Value)
	if err != nil {
		// Not an envelope at all: the reader's decode refuses it as it
		// refuses any unreadable record.
		return append(out, rec), bad
	}
	events, err := schemas.Unbundle(env)
	if err != nil {
		return out, append(bad, Unreadable{Rec: rec, Err: err})
	}
	for i, raw := range events {
		var head struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Key  string `json:"key"`
		}
		if err := gojson.Unmarshal(raw, &head); err != nil {
			r := RawRecord(rec.Topic, string(rec.Key), "", "", raw)
			r.Partition, r.Offset, r.Timestamp = rec.Partition, rec.Offset, rec.Timestamp
			bad = append(bad, Unreadable{Rec: r, Err: fmt.Errorf("event %d of bundle %s: %w", i, env.ID, err)})
			continue
		}
		r := RawRecord(rec.Topic, head.Key, head.Type, head.ID, raw)
		r.Partition, r.Offset, r.Timestamp = rec.Partition, rec.Offset, rec.Timestamp
		if tp := Header(rec, "traceparent"); tp != "" {
			SetTraceParent(r, tp) // the bundle's trace: its first traced command's
		}
		out = append(out, r)
	}
	return out, bad
}

// Bundles packs the events emitted to a bundled topic into bundle
// envelopes keyed by the topic, in order, each carrying at most about
// MaxBundleBytes of events (an event larger than that alone).
func Bundles(topic string, events []schemas.Envelope, now time.Time) ([]schemas.Envelope, error) {
	var out, chunk []schemas.Envelope
	size := 0
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		b, err := schemas.Bundle(topic, chunk, now)
		if err != nil {
			return fmt.Errorf("bundle %d events for %s: %w", len(chunk), topic, err)
		}
		out, chunk, size = append(out, b), nil, 0
		return nil
	}
	for _, e := range events {
		n := len(e.Data) + envelopeOverhead
		if size+n > MaxBundleBytes {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		chunk, size = append(chunk, e), size+n
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// envelopeOverhead is a generous size of an envelope's fields besides data.
const envelopeOverhead = 320
