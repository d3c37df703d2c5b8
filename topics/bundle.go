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
// each had been produced alone. A bundle that does not read is returned as
// is (readers skip what they cannot read, as they do any unreadable record).
func Expand(rec *kgo.Record) []*kgo.Record {
	if Header(rec, "type") != schemas.TypeEventBundle {
		return []*kgo.Record{rec}
	}
	env, err := schemas.Read(rec.Value)
	if err != nil {
		return []*kgo.Record{rec}
	}
	events, err := schemas.Unbundle(env)
	if err != nil {
		return []*kgo.Record{rec}
	}
	out := make([]*kgo.Record, 0, len(events))
	for _, raw := range events {
		var head struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Key  string `json:"key"`
		}
		if gojson.Unmarshal(raw, &head) != nil {
			continue
		}
		r := RawRecord(rec.Topic, head.Key, head.Type, head.ID, raw)
		r.Partition, r.Offset, r.Timestamp = rec.Partition, rec.Offset, rec.Timestamp
		out = append(out, r)
	}
	return out
}

// ExpandAll is Expand over a batch of records, in order.
func ExpandAll(recs []*kgo.Record) []*kgo.Record {
	out := make([]*kgo.Record, 0, len(recs))
	for _, rec := range recs {
		out = append(out, Expand(rec)...)
	}
	return out
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
