package topics

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnsureTopics creates every topic of All that the cluster lacks, with its
// partition count and retention. Existing topics are left as they are.
func EnsureTopics(ctx context.Context, cl *kgo.Client) error {
	adm := kadm.NewClient(cl)
	for _, s := range All() {
		ret := strconv.FormatInt(s.RetentionMs, 10)
		resp, err := adm.CreateTopic(ctx, s.Partitions, -1, map[string]*string{"retention.ms": &ret}, s.Name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", s.Name, err)
		}
	}
	return nil
}

// Describe returns the partition count of every existing topic.
func Describe(ctx context.Context, cl *kgo.Client) (map[string]int, error) {
	adm := kadm.NewClient(cl)
	details, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	out := map[string]int{}
	for name, d := range details {
		out[name] = len(d.Partitions)
	}
	return out, nil
}

// EndOffsets returns the current end offset of every partition of topic.
func EndOffsets(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int64, error) {
	adm := kadm.NewClient(cl)
	offs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	var firstErr error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil && firstErr == nil {
			firstErr = o.Err
		}
		out[o.Partition] = o.Offset
	})
	if firstErr != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, firstErr)
	}
	return out, nil
}

// Lag returns how many records of topic the consumer group has not yet
// committed past, summed over partitions (a partition without a commit
// counts all its records). Zero means the group has applied everything
// produced so far: the signal tests wait on instead of sleeping.
func Lag(ctx context.Context, cl *kgo.Client, group, topic string) (int64, error) {
	ends, err := EndOffsets(ctx, cl, topic)
	if err != nil {
		return 0, err
	}
	committed, err := kadm.NewClient(cl).FetchOffsetsForTopics(ctx, group, topic)
	if err != nil {
		return 0, fmt.Errorf("committed offsets of %s on %s: %w", group, topic, err)
	}
	var lag int64
	for p, end := range ends {
		if c, ok := committed.Lookup(topic, p); ok && c.At >= 0 {
			lag += max(end-c.At, 0)
		} else {
			lag += end
		}
	}
	return lag, nil
}
