package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/schemas"
	spipeline "github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// TestRelayCrashBeforeCursorRepublishesAndAppliesOnce: the relay publishes
// the log's ledger.append events and crashes before moving its cursor; the
// next relay publishes them again, and the appender chains each once.
func TestRelayCrashBeforeCursorRepublishesAndAppliesOnce(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 5
	var rows []spipeline.OutboxRow
	for i := range n {
		amount := int64(i + 1)
		env, err := schemas.New(schemas.TypeLedgerAppend, "", "user-1", schemas.LedgerAppend{
			Kind: schemas.LedgerKindTransfer, SourceID: fmt.Sprintf("tx-%d", i), ActorUserID: "user-1",
			AmountCents: &amount, Currency: "KZT"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		row, err := spipeline.EventRow(topics.LedgerAppend, env)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if err := spipeline.InsertOutbox(ctx, e.pool, rows); err != nil {
		t.Fatal(err)
	}
	newRelay := func(opts ...relay.Option) *relay.Relay {
		return relay.New(e.pool, topics.NewProducer(e.client), prometheus.NewRegistry(),
			slog.New(slog.NewTextHandler(io.Discard, nil)), opts...)
	}

	crashed := errors.New("crash after publish")
	first := newRelay(relay.WithAfterPublish(func(context.Context) error { return crashed }))
	for {
		_, err := first.PublishOnce(ctx)
		if errors.Is(err, crashed) {
			break
		}
		if err != nil || ctx.Err() != nil {
			t.Fatalf("first relay: %v (ctx %v)", err, ctx.Err())
		}
	}
	if c, err := spipeline.LogCursor(ctx, e.pool); err != nil || c != 0 {
		t.Fatalf("cursor %d (err %v) after the crash, want 0", c, err)
	}

	second := newRelay()
	sent := 0
	for sent < n {
		k, err := second.PublishOnce(ctx)
		if err != nil || ctx.Err() != nil {
			t.Fatalf("second relay: %v (ctx %v)", err, ctx.Err())
		}
		sent += k
	}
	if sent != n {
		t.Fatalf("second relay sent %d, want %d", sent, n)
	}

	// Both publishes are on the topic: every entry arrives twice.
	cl, err := topics.NewClient(e.brokers, kgo.ConsumeTopics(topics.LedgerAppend),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	onTopic := 0
	for onTopic < 2*n && ctx.Err() == nil {
		onTopic += len(cl.PollFetches(ctx).Records())
	}
	if onTopic != 2*n {
		t.Fatalf("%d records on %s, want %d", onTopic, topics.LedgerAppend, 2*n)
	}

	e.run(t, nil)
	e.waitHead(t, n)
	e.waitDrained(t) // the duplicates would land after the head
	e.checkChain(t, n)
	// The source key, not a processed-command row, made the duplicates no-ops.
	var processed int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM processed_commands`).Scan(&processed); err != nil || processed != 0 {
		t.Fatalf("%d processed-command rows (err %v), want none for reply-less appends", processed, err)
	}
}
