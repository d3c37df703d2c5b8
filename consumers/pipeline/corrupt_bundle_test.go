package pipeline_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestCorruptBundleIsParked: on ledger.append, a bundle whose event list
// does not decode, and an event of another bundle that is not an envelope,
// are parked on the DLQ with their error; the readable command beside the
// bad event is applied. Nothing of a bundle is skipped without a trace.
func TestCorruptBundleIsParked(t *testing.T) {
	pool, brokers := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	corrupt, err := schemas.New(schemas.TypeEventBundle, topics.LedgerAppend, "", "not a list of events", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	good := command(t, "beside-the-bad-one", 4).Env
	good.ReplyTo = ""
	raw, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := schemas.New(schemas.TypeEventBundle, topics.LedgerAppend, "", []json.RawMessage{raw, json.RawMessage(`12345`)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := topics.NewClient(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, env := range []schemas.Envelope{corrupt, mixed} {
		rec, err := topics.Record(topics.LedgerAppend, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := pipeline.NewRunner(pipeline.Config{Group: "test-group", Topics: []string{topics.LedgerAppend}, Brokers: brokers},
		pool, counterHandler{}, pipeline.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	defer func() { stop(); <-done }()

	dlq, err := topics.NewClient(brokers, kgoConsume(topics.DLQ(topics.LedgerAppend))...)
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	var parked []*kgo.Record
	for len(parked) < 2 && ctx.Err() == nil {
		parked = append(parked, dlq.PollFetches(ctx).Records()...)
	}
	if len(parked) != 2 {
		t.Fatalf("%d records parked, want 2 (the corrupt bundle and the bad event)", len(parked))
	}
	if v := string(parked[0].Value); v != string(mustRecord(t, corrupt).Value) {
		t.Errorf("first parked record %s, want the corrupt bundle", v)
	}
	if v := string(parked[1].Value); v != "12345" {
		t.Errorf("second parked record %s, want the bad event", v)
	}
	for _, p := range parked {
		if e := topics.Header(p, topics.HeaderDLQError); e == "" || !strings.Contains(topics.Header(p, topics.HeaderDLQSource), topics.LedgerAppend) {
			t.Errorf("parked record without its error or source: %q %q", e, topics.Header(p, topics.HeaderDLQSource))
		}
	}
	for total(t, pool) != 4 {
		if ctx.Err() != nil {
			t.Fatalf("total %d, want 4 (the readable command applied)", total(t, pool))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustRecord(t *testing.T, env schemas.Envelope) *kgo.Record {
	t.Helper()
	rec, err := topics.Record(topics.LedgerAppend, env)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
