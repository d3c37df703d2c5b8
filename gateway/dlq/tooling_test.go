package dlq_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/gateway/dlq"
	"github.com/fintech/platform/schemas"
	dlqstore "github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// TestReplayLinks, on Postgres and the embedded broker over TCP: a replay
// publishes the parked record to its source topic with its key, value and
// command headers, without the parking's headers, naming the record it
// replays; that record, parked again, is listed as a replay of it; a
// replay-of header is trusted only for a replayed record of the same
// command; Show has the audited decision.
func TestReplayLinks(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	cl, err := topics.NewClient(b.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := topics.EnsureTopics(ctx, cl); err != nil {
		t.Fatal(err)
	}
	ops, err := topics.NewOps(b.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	tooling, err := dlq.New(ops, dlqstore.NewStore(pool), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	dlqTopic := topics.DLQ(topics.FiatCommands)
	parked := func(id, key string, extra ...kgo.RecordHeader) *kgo.Record {
		r := topics.RawRecord(dlqTopic, key, "fiat.future_command", id, []byte(`{"id":"`+id+`","type":"fiat.future_command"}`))
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: topics.HeaderDLQError, Value: []byte("unknown message type")})
		r.Headers = append(r.Headers, extra...)
		return r
	}
	first := dlqTopic + ":0:0"
	// Offset 0: the command; offset 1: another command claiming to be a
	// replay of offset 0.
	if err := cl.ProduceSync(ctx, parked("c1", "k1"),
		parked("c2", "k2", kgo.RecordHeader{Key: dlq.HeaderReplayOf, Value: []byte(first)})).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got, err := tooling.Replay(ctx, first, "admin:t")
	if err != nil || got.State != schemas.DLQStateReplayed || got.CommandID != "c1" {
		t.Fatalf("replay: %+v, %v", got, err)
	}

	spans, err := ops.Spans(ctx, topics.FiatCommands)
	if err != nil {
		t.Fatal(err)
	}
	var again *kgo.Record
	for _, s := range spans {
		recs, err := ops.Read(ctx, s, s.Start, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			again = r
		}
	}
	if again == nil || string(again.Key) != "k1" || topics.Header(again, "id") != "c1" || topics.Header(again, dlq.HeaderReplayOf) != first ||
		topics.Header(again, topics.HeaderDLQError) != "" {
		t.Fatalf("replayed record %+v, want k1/c1 naming %s without the dlq-error", again, first)
	}

	// The consumer parks it again as it came (offset 2); a record of
	// another command claims the replayed one too (offset 3).
	back := &kgo.Record{Topic: dlqTopic, Key: again.Key, Value: again.Value,
		Headers: append(append([]kgo.RecordHeader{}, again.Headers...), kgo.RecordHeader{Key: topics.HeaderDLQError, Value: []byte("unknown message type")})}
	if err := cl.ProduceSync(ctx, back, parked("c3", "k3", kgo.RecordHeader{Key: dlq.HeaderReplayOf, Value: []byte(first)})).FirstErr(); err != nil {
		t.Fatal(err)
	}
	list, err := tooling.List(ctx, topics.FiatCommands, "", 10)
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	want := []string{"", "", first, ""}
	for i, r := range list {
		if r.ReplayOf != want[i] {
			t.Errorf("record %s (command %s) is a replay of %q, want %q", r.ID, r.CommandID, r.ReplayOf, want[i])
		}
	}
	shown, err := tooling.Show(ctx, first)
	if err != nil || len(shown.History) != 1 || shown.History[0].Action != dlqstore.ActionReplay || shown.History[0].Actor != "admin:t" {
		t.Fatalf("show %s: history %+v, %v", first, shown.History, err)
	}
	if shown, err := tooling.Show(ctx, list[2].ID); err != nil || shown.Record.ReplayOf != first {
		t.Fatalf("show %s: %+v, %v", list[2].ID, shown.Record, err)
	}
}
