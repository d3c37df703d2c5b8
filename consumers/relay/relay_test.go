package relay_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// TestRelayPublishesLargeBacklogInOrder queues more and larger rows than fit
// in one Kafka batch (1,500 x 2 KB): all arrive, in outbox order per key, and
// the outbox is left empty.
func TestRelayPublishesLargeBacklogInOrder(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	broker, err := topics.StartEmbedded(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const n = 1500
	pad := strings.Repeat("x", 2000)
	rows := make([]pipeline.OutboxRow, n)
	for i := range rows {
		rows[i] = pipeline.OutboxRow{Topic: topics.EventsFiat, Key: fmt.Sprintf("k%d", i%3), Type: "test",
			EventID: fmt.Sprintf("e%05d", i), Payload: []byte(fmt.Sprintf(`{"seq":%d,"pad":%q}`, i, pad))}
	}
	if err := pipeline.InsertOutbox(ctx, pool, rows); err != nil {
		t.Fatal(err)
	}

	cl, err := topics.NewClient(broker.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r := relay.New(pool, topics.NewProducer(cl), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for sent := 0; sent < n; {
		k, err := r.PublishOnce(ctx)
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		if k == 0 {
			t.Fatalf("outbox ran dry after %d rows", sent)
		}
		sent += k
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("outbox has %d rows left (err %v)", left, err)
	}

	consumer, err := topics.NewClient(broker.Addrs(), kgo.ConsumeTopics(topics.EventsFiat),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	last := map[string]string{}
	got := 0
	for got < n && ctx.Err() == nil {
		consumer.PollFetches(ctx).EachRecord(func(rec *kgo.Record) {
			id := topics.Header(rec, "id")
			if prev := last[string(rec.Key)]; prev != "" && id <= prev {
				t.Errorf("key %s: %s after %s", rec.Key, id, prev)
			}
			last[string(rec.Key)] = id
			got++
		})
	}
	if got != n {
		t.Fatalf("consumed %d records, want %d", got, n)
	}
}
