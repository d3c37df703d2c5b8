package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// TestDispatcherParksUnreadableEvents: a record on an events topic that is
// not an event is parked on the topic's DLQ (with why and where from), not
// dropped with a log line; the event after it is recorded, and the offsets
// are committed only once the DLQ has the parked record.
func TestDispatcherParksUnreadableEvents(t *testing.T) {
	b, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice := f.subscribe(t, "https://alice.example/hook", "secret-0123456789ab")
	var aliceID string
	if err := f.pool.QueryRow(ctx, `SELECT user_id FROM webhook_subscriptions WHERE id = $1`, alice).Scan(&aliceID); err != nil {
		t.Fatal(err)
	}
	runDispatcher(t, b.Addrs(), f.store, nil, &countingWaker{})
	cl, produce := eventProducer(t, b.Addrs())
	bad := topics.RawRecord(topics.EventsFiat, "w1", "transfer.completed", "bad-1", []byte(`{not an event`))
	if err := cl.ProduceSync(ctx, bad).FirstErr(); err != nil {
		t.Fatal(err)
	}
	good, _ := schemas.New("transfer.completed", "w1", aliceID, map[string]any{"txId": "t1"}, time.Now())
	produce(topics.EventsFiat, good)

	dlq, err := topics.NewClient(b.Addrs(), kgo.ConsumeTopics(topics.DLQ(topics.EventsFiat)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	var parked *kgo.Record
	for parked == nil && ctx.Err() == nil {
		dlq.PollFetches(ctx).EachRecord(func(r *kgo.Record) { parked = r })
	}
	if parked == nil {
		t.Fatal("the unreadable event was never parked on the DLQ")
	}
	if string(parked.Value) != `{not an event` || topics.Header(parked, topics.HeaderDLQError) == "" ||
		topics.Header(parked, topics.HeaderDLQSource) == "" {
		t.Fatalf("parked %q with headers %v, want the record as it came with why and where from", parked.Value, parked.Headers)
	}
	waitFor(t, 15*time.Second, "the event after it to be recorded and the offsets committed", func() bool {
		rows, err := f.store.List(ctx, store.Filter{Limit: 50})
		if err != nil || len(rows) != 1 || rows[0].EventID != good.ID {
			return false
		}
		lag, err := topics.Lag(ctx, cl, topics.GroupWebhooks, topics.EventsFiat)
		return err == nil && lag == 0
	})
}

// TestRerecordedEventMakesTheSameDelivery: an event recorded again after
// its delivery row was lost (a database restored to before it, the event
// re-read by the dispatcher) queues the delivery under the same id, with
// the same analytics change event: receivers and analytics see one
// delivery, not two.
func TestRerecordedEventMakesTheSameDelivery(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	sub := f.subscribe(t, "https://alice.example/hook", "secret-0123456789ab")
	ev := store.Event{ID: schemas.NewID(), Type: "transfer.completed", Module: "fiat",
		Data: []byte(`{"txId":"t1"}`), OccurredAt: time.Now().Add(-time.Minute)}
	pairs := []store.NewDelivery{{SubscriptionID: sub, EventID: ev.ID}}
	record := func(at time.Time) (delivery, change string) {
		t.Helper()
		if n, err := f.store.Record(ctx, []store.Event{ev}, pairs, at); err != nil || n != 1 {
			t.Fatalf("record: %d %v", n, err)
		}
		if err := f.pool.QueryRow(ctx, `SELECT id FROM webhook_deliveries WHERE event_id = $1`, ev.ID).Scan(&delivery); err != nil {
			t.Fatal(err)
		}
		if err := f.pool.QueryRow(ctx, `SELECT event_ids[1] FROM event_log WHERE types[1] = $1 ORDER BY seq DESC LIMIT 1`,
			schemas.TypeWebhookDeliveryUpdated).Scan(&change); err != nil {
			t.Fatal(err)
		}
		return delivery, change
	}
	d1, c1 := record(time.Now())
	// The restore: the delivery and its change event are gone.
	if _, err := f.pool.Exec(ctx, `DELETE FROM webhook_deliveries; DELETE FROM webhook_events`); err != nil {
		t.Fatal(err)
	}
	d2, c2 := record(time.Now().Add(time.Second))
	if d1 != d2 || c1 != c2 {
		t.Fatalf("recorded again: delivery %s, change event %s; first: %s, %s (want the same)", d2, c2, d1, c1)
	}
}
