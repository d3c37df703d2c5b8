// Package dlq parks the records a consumer cannot read on <topic>.dlq. The
// operators' tooling that lists, replays and discards them, with its
// decisions in Postgres, is gateway/dlq.
package dlq

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// Park is the record a consumer parks on <topic>.dlq for a record it could
// not read: the record as it came, every header kept (a replay's
// dlq-replay-of among them, so the new parked record names the one it
// replays), with why and where from.
func Park(rec *kgo.Record, cause error) *kgo.Record {
	headers := append([]kgo.RecordHeader{}, rec.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: topics.HeaderDLQError, Value: []byte(cause.Error())},
		kgo.RecordHeader{Key: topics.HeaderDLQSource, Value: []byte(fmt.Sprintf("%s/%d/%d", rec.Topic, rec.Partition, rec.Offset))})
	return &kgo.Record{Topic: topics.DLQ(rec.Topic), Key: rec.Key, Value: rec.Value, Headers: headers}
}

// ParkEnvelope is the record a consumer parks on <topic>.dlq for a command
// of topic that failed to apply on its own: its envelope with the
// platform's headers and why. The source record's other headers are not at
// hand here; a replay of it parked again is linked by its command id.
func ParkEnvelope(topic string, env schemas.Envelope, cause error) *kgo.Record {
	rec, err := topics.Record(topic, env)
	if err != nil {
		rec = &kgo.Record{Topic: topic}
	}
	rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: topics.HeaderDLQError, Value: []byte(cause.Error())})
	rec.Topic = topics.DLQ(topic)
	return rec
}
