package topics

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
)

// Record builds the Kafka record of an envelope: the value is the envelope
// JSON (schemas.Encode: encoded once, Data written as it is), the key its
// Key, and headers carry type and id so tools such as kcat can filter
// without parsing.
func Record(topic string, env schemas.Envelope) (*kgo.Record, error) {
	value, err := schemas.Encode(env)
	if err != nil {
		return nil, err
	}
	return RawRecord(topic, env.Key, env.Type, env.ID, value), nil
}

// RawRecord builds a record from an already encoded envelope.
func RawRecord(topic, key, typ, id string, value []byte) *kgo.Record {
	r := &kgo.Record{
		Topic: topic,
		Value: value,
		Headers: []kgo.RecordHeader{
			{Key: "type", Value: []byte(typ)},
			{Key: "id", Value: []byte(id)},
		},
	}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

// Header returns the value of a record header, or "".
func Header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// HeaderIs reports whether a record header has the value: Header without
// the copy, for readers that test every record they read.
func HeaderIs(r *kgo.Record, key, value string) bool {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value) == value
		}
	}
	return value == ""
}

// Producer publishes records and waits for the broker's acknowledgement.
type Producer struct {
	client *kgo.Client
}

// NewProducer wraps a client.
func NewProducer(client *kgo.Client) *Producer { return &Producer{client: client} }

// PublishRecords produces records and returns once the broker has all of them.
func (p *Producer) PublishRecords(ctx context.Context, recs ...*kgo.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := p.client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("publish %d records: %w", len(recs), err)
	}
	return nil
}
