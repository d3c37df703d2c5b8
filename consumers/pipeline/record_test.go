package pipeline

import (
	"bytes"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

func event(t *testing.T, key string) schemas.Envelope {
	t.Helper()
	env, err := schemas.New(schemas.TypeWalletCreated, key, "u1", map[string]string{"walletId": key}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestOutboxPayloadIsTheRecordValue: the event log row storage keeps (its
// payload, schemas.Encode) is published by the relay as the record
// topics.Record would build: same value, key and headers.
func TestOutboxPayloadIsTheRecordValue(t *testing.T) {
	t.Parallel()
	env := event(t, "w1")
	row, err := pipeline.EventRow(topics.EventsFiat, env)
	if err != nil {
		t.Fatal(err)
	}
	want, err := topics.Record(topics.EventsFiat, env)
	if err != nil {
		t.Fatal(err)
	}
	got := topics.RawRecord(row.Topic, row.Key, row.Type, row.EventID, row.Payload) // as the relay publishes it
	if got.Topic != want.Topic || !bytes.Equal(got.Value, want.Value) || !bytes.Equal(got.Key, want.Key) {
		t.Fatalf("published %s %q %q, want %s %q %q", got.Topic, got.Key, got.Value, want.Topic, want.Key, want.Value)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Fatalf("headers %v, want %v", got.Headers, want.Headers)
	}
	for i := range want.Headers {
		if got.Headers[i].Key != want.Headers[i].Key || !bytes.Equal(got.Headers[i].Value, want.Headers[i].Value) {
			t.Fatalf("headers %v, want %v", got.Headers, want.Headers)
		}
	}
}

// TestSortOutRecordReplies: without a database, a batch's commands applied
// before answer from their stored result (409 for another body), a repeat
// inside the batch answers like its first occurrence, only fresh commands
// get processed rows, and events to a bundled topic become one bundle row
// after the others.
func TestSortOutRecordReplies(t *testing.T) {
	t.Parallel()
	cmd := func(id, hash string) Command {
		return Command{Env: schemas.Envelope{ID: id, Type: "test.cmd", RequestHash: hash, ReplyTo: "r-" + id}, Topic: topics.FiatCommands}
	}
	cmds := []Command{cmd("old", "h1"), cmd("clash", "h2"), cmd("new", "h3"), cmd("new", "h3"), cmd("quiet", "h4")}
	cmds[4].Env.ReplyTo = ""
	seen := map[string]pipeline.Processed{
		"old":   {CommandID: "old", RequestHash: "h1", Status: 201, Body: []byte(`{"old":true}`)},
		"clash": {CommandID: "clash", RequestHash: "other", Status: 201, Body: []byte(`{}`)},
	}
	s := sortOut(cmds, seen)
	if len(s.fresh) != 2 || s.fresh[0].Env.ID != "new" || s.fresh[1].Env.ID != "quiet" {
		t.Fatalf("fresh = %v, want new and quiet", s.fresh)
	}
	bundled := map[string]bool{topics.LedgerAppend: true}
	outcomes := []Outcome{
		{Status: 201, Body: []byte(`{"new":true}`), Emit: []Emission{
			{Topic: topics.LedgerAppend, Env: event(t, "a1")},
			{Topic: topics.EventsFiat, Env: event(t, "w1")},
			{Topic: topics.LedgerAppend, Env: event(t, "a2")}}},
		{Status: 200, Unrecorded: true},
	}
	processed, outbox, err := s.record(outcomes, bundled)
	if err != nil {
		t.Fatal(err)
	}
	if len(processed) != 1 || processed[0].CommandID != "new" || processed[0].Status != 201 {
		t.Fatalf("processed = %+v, want the one row of new (quiet is unrecorded and waited for by nobody)", processed)
	}
	if len(outbox) != 2 || outbox[0].Topic != topics.EventsFiat || outbox[1].Topic != topics.LedgerAppend ||
		outbox[1].Type != schemas.TypeEventBundle {
		t.Fatalf("outbox = %+v, want the fiat event, then one bundle on %s", outbox, topics.LedgerAppend)
	}
	bundle, err := schemas.Decode(outbox[1].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if inside, err := schemas.Unbundle(bundle); err != nil || len(inside) != 2 {
		t.Fatalf("bundle holds %d events (%v), want 2", len(inside), err)
	}
	if _, _, err := s.record(outcomes[:1], bundled); err == nil {
		t.Fatal("record accepted one outcome for two fresh commands")
	}

	replies, err := s.replies(cmds)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status   int
		replayed bool
	}{"r-old": {201, true}, "r-clash": {409, false}, "r-new": {201, false}}
	if len(replies) != 4 {
		t.Fatalf("%d replies, want 4 (quiet has no ReplyTo)", len(replies))
	}
	dups := 0
	for _, rec := range replies {
		env, err := schemas.Decode(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := schemas.DataAs[schemas.Reply](env)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[env.Key]
		if rec.Topic != topics.GatewayReplies || !ok {
			t.Fatalf("reply %s to %s, want one of %v on %s", rec.Topic, env.Key, want, topics.GatewayReplies)
		}
		if env.Key == "r-new" {
			dups++
			w.replayed = dups == 2 // the repeat inside the batch answers as a replay of the first
		}
		if rep.Status != w.status || rep.Replayed != w.replayed {
			t.Fatalf("reply to %s: status %d replayed %v, want %d %v", env.Key, rep.Status, rep.Replayed, w.status, w.replayed)
		}
	}
}
