package pipeline_test

import (
	"context"
	"testing"

	"github.com/fintech/platform/topics"
	"github.com/twmb/franz-go/pkg/kgo"
)

func kgoConsume(topic string) []kgo.Opt {
	return []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
}

// wantParked waits until the fiat commands' DLQ holds one record and checks
// it is the command with id.
func wantParked(t *testing.T, ctx context.Context, brokers []string, id string) {
	t.Helper()
	dlq, err := topics.NewClient(brokers, kgoConsume(topics.DLQ(topics.FiatCommands))...)
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	var parked []string
	for len(parked) < 1 && ctx.Err() == nil {
		dlq.PollFetches(ctx).EachRecord(func(r *kgo.Record) { parked = append(parked, topics.Header(r, "id")) })
	}
	if len(parked) != 1 || parked[0] != id {
		t.Fatalf("parked %v, want [%s]", parked, id)
	}
}
