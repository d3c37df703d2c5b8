package topics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers the consumer runner adds to a record it parks on a DLQ topic.
const (
	// HeaderDLQError is why the record was parked.
	HeaderDLQError = "dlq-error"
	// HeaderDLQSource is "<topic>/<partition>/<offset>" of the record the
	// consumer could not read (absent on a command that failed to apply;
	// its source is the DLQ topic's name without ".dlq").
	HeaderDLQSource = "dlq-source"
)

// DLQTopics lists the DLQ topics of All, sorted.
func DLQTopics() []string {
	var out []string
	for _, s := range All() {
		if IsDLQ(s.Name) {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// IsDLQ reports whether topic is a DLQ topic.
func IsDLQ(topic string) bool { return strings.HasSuffix(topic, ".dlq") }

// DLQSource returns the topic a parked record came from: the topic of its
// dlq-source header, else the DLQ topic's name without ".dlq". It is one
// of All's source topics, or an error.
func DLQSource(rec *kgo.Record) (string, error) {
	src := strings.TrimSuffix(rec.Topic, ".dlq")
	if h := Header(rec, HeaderDLQSource); h != "" {
		src, _, _ = strings.Cut(h, "/")
	}
	for _, s := range All() {
		if s.Name == src && !IsDLQ(src) && DLQ(src) == rec.Topic {
			return src, nil
		}
	}
	return "", fmt.Errorf("parked record %s/%d/%d names no source topic (%q)", rec.Topic, rec.Partition, rec.Offset, src)
}

// Ops is the operators' client: it reads the records parked on DLQ topics,
// publishes them again to their source topics, and reads consumer group
// lag. It is safe for concurrent use.
type Ops struct {
	brokers []string
	cl      *kgo.Client
	adm     *kadm.Client
}

// NewOps connects to brokers.
func NewOps(brokers []string) (*Ops, error) {
	cl, err := NewClient(brokers)
	if err != nil {
		return nil, err
	}
	return &Ops{brokers: brokers, cl: cl, adm: kadm.NewClient(cl)}, nil
}

// Close closes the client.
func (r *Ops) Close() { r.cl.Close() }

// Span is the offsets a partition holds: [Start, End).
type Span struct {
	Topic      string
	Partition  int32
	Start, End int64
}

// Spans returns the offsets every partition of topics holds, sorted by
// topic and partition.
func (r *Ops) Spans(ctx context.Context, topics ...string) ([]Span, error) {
	starts, err := r.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := r.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var out []Span
	var firstErr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			firstErr = errors.Join(firstErr, fmt.Errorf("end offset of %s/%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		s := Span{Topic: o.Topic, Partition: o.Partition, End: o.Offset}
		if st, ok := starts.Lookup(o.Topic, o.Partition); ok && st.Err == nil {
			s.Start = st.Offset
		}
		out = append(out, s)
	})
	if firstErr != nil {
		return nil, firstErr
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// Read returns up to limit records of one partition from offset from on,
// stopping at the partition's end as it was when Read began.
func (r *Ops) Read(ctx context.Context, s Span, from int64, limit int) ([]*kgo.Record, error) {
	from = max(from, s.Start)
	if from >= s.End || limit <= 0 {
		return nil, nil
	}
	cl, err := NewClient(r.brokers, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		s.Topic: {s.Partition: kgo.NewOffset().At(from)},
	}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < limit {
		fetches := cl.PollRecords(ctx, limit-len(out))
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s/%d from %d: %w", s.Topic, s.Partition, from, err)
		}
		var ferr error
		fetches.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("read %s/%d from %d: %w", s.Topic, s.Partition, from, ferr)
		}
		done := false
		fetches.EachRecord(func(rec *kgo.Record) {
			if rec.Offset < s.End && len(out) < limit {
				out = append(out, rec)
			}
			if rec.Offset >= s.End-1 {
				done = true
			}
		})
		if done {
			break
		}
	}
	return out, nil
}

// ReadOne returns the record at offset of one partition, or nil when the
// partition does not hold that offset.
func (r *Ops) ReadOne(ctx context.Context, topic string, partition int32, offset int64) (*kgo.Record, error) {
	spans, err := r.Spans(ctx, topic)
	if err != nil {
		return nil, err
	}
	for _, s := range spans {
		if s.Partition != partition || offset < s.Start || offset >= s.End {
			continue
		}
		recs, err := r.Read(ctx, s, offset, 1)
		if err != nil || len(recs) == 0 || recs[0].Offset != offset {
			return nil, err
		}
		return recs[0], nil
	}
	return nil, nil
}

// Publish publishes one record and waits for the broker's acknowledgement
// (a replay of a parked record).
func (r *Ops) Publish(ctx context.Context, rec *kgo.Record) error {
	if err := r.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("publish to %s: %w", rec.Topic, err)
	}
	return nil
}

// GroupLags returns, per consumer group, the records of its topics it has
// not yet committed past (summed over partitions).
func (r *Ops) GroupLags(ctx context.Context, groups ...string) (map[string]int64, error) {
	lags, err := r.adm.Lag(ctx, groups...)
	if err != nil {
		return nil, fmt.Errorf("describe group lag: %w", err)
	}
	out := make(map[string]int64, len(groups))
	for _, g := range groups {
		out[g] = 0
	}
	var firstErr error
	lags.Each(func(l kadm.DescribedGroupLag) {
		if err := l.Error(); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("lag of %s: %w", l.Group, err)
			return
		}
		out[l.Group] = l.Lag.Total()
	})
	return out, firstErr
}
