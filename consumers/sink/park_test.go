package sink

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestSinkParksUnreadableEvents: a record on an events topic that is not an
// event, and a ledger entry whose data its table cannot take, are parked on
// their topics' DLQ (with why and where from) rather than dropped with a
// log line; the events around them are inserted, and the offsets are
// committed only once the DLQ has them.
func TestSinkParksUnreadableEvents(t *testing.T) {
	ctx, lazy, conn, db, broker, cl := sinkFixture(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	bad := topics.RawRecord(topics.EventsFiat, "w1", "transfer.completed", "bad-1", []byte(`{not an event`))
	entry, _ := schemas.New(schemas.TypeLedgerEntryAdded, "e1", "", map[string]any{"height": "not a number"}, time.Now())
	badEntry, err := topics.Record(topics.EventsLedger, entry)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := schemas.New("transfer.completed", "w1", "u1", map[string]any{"txId": "t"}, time.Now())
	goodRec, err := topics.Record(topics.EventsFiat, good)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, bad, badEntry, goodRec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Brokers: broker.Addrs(), Database: db, FlushInterval: 100 * time.Millisecond}, lazy,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	defer func() { stop(); <-done }()

	dlq, err := topics.NewClient(broker.Addrs(), kgo.ConsumeTopics(topics.DLQ(topics.EventsFiat), topics.DLQ(topics.EventsLedger)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	parked := map[string]*kgo.Record{}
	for len(parked) < 2 && ctx.Err() == nil {
		dlq.PollFetches(ctx).EachRecord(func(r *kgo.Record) { parked[r.Topic] = r })
	}
	if p := parked[topics.DLQ(topics.EventsFiat)]; p == nil || string(p.Value) != `{not an event` ||
		topics.Header(p, topics.HeaderDLQError) == "" || topics.Header(p, topics.HeaderDLQSource) == "" {
		t.Fatalf("the unreadable record was not parked as it came with why and where from: %+v", p)
	}
	if p := parked[topics.DLQ(topics.EventsLedger)]; p == nil || topics.Header(p, "id") != entry.ID {
		t.Fatalf("the ledger entry its table cannot take was not parked: %+v", p)
	}
	for ctx.Err() == nil {
		var n uint64
		err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".events WHERE id = ?", good.ID).Scan(&n)
		lagFiat, err2 := topics.Lag(ctx, cl, topics.GroupSink, topics.EventsFiat)
		lagLedger, err3 := topics.Lag(ctx, cl, topics.GroupSink, topics.EventsLedger)
		if err == nil && err2 == nil && err3 == nil && n == 1 && lagFiat == 0 && lagLedger == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the readable event was not inserted, or the offsets not committed")
}
