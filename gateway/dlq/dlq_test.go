package dlq

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	dlqstore "github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/topics"
	tdlq "github.com/fintech/platform/topics/dlq"
)

func TestParseID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want position
		ok   bool
	}{
		{"fiat.commands.dlq:0:42", position{"fiat.commands.dlq", 0, 42}, true},
		{"events.fiat.dlq:3:0", position{"events.fiat.dlq", 3, 0}, true},
		{"fiat.commands:0:42", position{}, false},      // not a DLQ topic
		{"gateway.replies.dlq:0:1", position{}, false}, // replies have no DLQ
		{"fiat.commands.dlq:0:-1", position{}, false},  // negative offset
		{"fiat.commands.dlq:-1:0", position{}, false},  // negative partition
		{"fiat.commands.dlq:0", position{}, false},     // no offset
		{"fiat.commands.dlq:x:1", position{}, false},   // not a number
		{"fiat.commands.dlq:0:99999999999999999999", position{}, false},
		{"", position{}, false},
		{"nope", position{}, false},
	}
	for _, tt := range tests {
		got, ok := parseID(tt.id)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseID(%q) = %+v, %v; want %+v, %v", tt.id, got, ok, tt.want, tt.ok)
		}
		if ok && got.id() != tt.id {
			t.Errorf("id() of %q = %q", tt.id, got.id())
		}
	}
}

func TestTopic(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"fiat.commands", "fiat.commands.dlq"},
		{"fiat.commands.dlq", "fiat.commands.dlq"},
		{"events.ledger", "events.ledger.dlq"},
		{"gateway.replies", ""},
		{"nope", ""},
		{"fiat.commands.dlq.dlq", ""},
	}
	for _, tt := range tests {
		got, err := Topic(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrUnknownTopic) {
				t.Errorf("Topic(%q) = %q, %v; want ErrUnknownTopic", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Topic(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestView reads a parked record's command from its headers, or from its
// envelope when a producer left the headers out, and its source from the
// dlq-source header or the DLQ topic's name.
func TestView(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	withHeaders := &kgo.Record{Topic: "fiat.commands.dlq", Offset: 7, Key: []byte("w1"), Timestamp: at,
		Value:   []byte(`{"id":"ignored","type":"ignored"}`),
		Headers: []kgo.RecordHeader{{Key: "type", Value: []byte("transfer")}, {Key: "id", Value: []byte("cmd1")}, {Key: topics.HeaderDLQError, Value: []byte("boom")}}}
	v := view(withHeaders, dlqstore.Decision{})
	if v.ID != "fiat.commands.dlq:0:7" || v.CommandID != "cmd1" || v.Type != "transfer" || v.Error != "boom" ||
		v.SourceTopic != "fiat.commands" || v.Key != "w1" || !v.FirstSeenAt.Equal(at) || v.State != schemas.DLQStateParked || v.DecidedAt != nil {
		t.Errorf("view with headers = %+v", v)
	}
	bare := &kgo.Record{Topic: "mask.commands.dlq", Value: []byte(`{"id":"cmd2","type":"mask.issue"}`),
		Headers: []kgo.RecordHeader{{Key: topics.HeaderDLQSource, Value: []byte("mask.commands/3/9")}}}
	decided := dlqstore.Decision{RecordID: "mask.commands.dlq:0:0", State: schemas.DLQStateReplayed, Replays: 2, Actor: "cli:ops", DecidedAt: at}
	v = view(bare, decided)
	if v.CommandID != "cmd2" || v.Type != "mask.issue" || v.SourceTopic != "mask.commands" || v.State != schemas.DLQStateReplayed ||
		v.Replays != 2 || v.DecidedBy != "cli:ops" || v.DecidedAt == nil {
		t.Errorf("view without headers = %+v", v)
	}
	garbage := &kgo.Record{Topic: "fiat.commands.dlq", Value: []byte("not json")}
	if v := view(garbage, dlqstore.Decision{}); v.CommandID != "" || v.Type != "" || v.SourceTopic != "fiat.commands" {
		t.Errorf("view of an unreadable record = %+v", v)
	}
	// A dlq-source naming another topic than the DLQ's own is not trusted.
	forged := &kgo.Record{Topic: "fiat.commands.dlq", Headers: []kgo.RecordHeader{{Key: topics.HeaderDLQSource, Value: []byte("ledger.append/0/1")}}}
	if _, err := topics.DLQSource(forged); err == nil {
		t.Error("DLQSource accepted a source that is not the DLQ's")
	}
}

// TestParkKeepsReplayLink: a replay of a parked record, parked again as it
// came, keeps the header naming the record it replays, with the new
// error and source; replaying that one names it instead, without the
// parking's headers.
func TestParkKeepsReplayLink(t *testing.T) {
	t.Parallel()
	parked := &kgo.Record{Topic: "fiat.commands.dlq", Offset: 4, Key: []byte("k"), Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: "id", Value: []byte("c1")}, {Key: topics.HeaderDLQError, Value: []byte("old")}}}
	replay, err := replayRecord(parked, "fiat.commands.dlq:0:4")
	if err != nil {
		t.Fatal(err)
	}
	replay.Partition, replay.Offset = 2, 9
	again := tdlq.Park(replay, errors.New("still bad"))
	if again.Topic != "fiat.commands.dlq" || string(again.Key) != "k" || string(again.Value) != "v" ||
		topics.Header(again, HeaderReplayOf) != "fiat.commands.dlq:0:4" || topics.Header(again, "id") != "c1" ||
		topics.Header(again, topics.HeaderDLQError) != "still bad" || topics.Header(again, topics.HeaderDLQSource) != "fiat.commands/2/9" {
		t.Fatalf("parked again: %+v", again)
	}
	next, err := replayRecord(again, "fiat.commands.dlq:0:7")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, h := range next.Headers {
		keys = append(keys, h.Key+"="+string(h.Value))
	}
	if got := strings.Join(keys, " "); next.Topic != "fiat.commands" || got != "id=c1 dlq-replay-of=fiat.commands.dlq:0:7" {
		t.Fatalf("second replay to %s with headers %s", next.Topic, got)
	}
}
