package relay_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// TestRelayUnderConcurrentWritersPublishesEveryEvent: writers commit event
// log rows out of seq order, some holding their transaction open for a
// while, while the relay runs: every event is published, none skipped.
func TestRelayUnderConcurrentWritersPublishesEveryEvent(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := e.relay(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()
	const writers, each = 8, 60
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tx, err := e.pool.Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				if err := pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{row(w*each+i, ""), row(w*each+i+100000, "")}); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(rand.IntN(30000)) * time.Microsecond)
				if err := tx.Commit(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	last := lastSeq(t, e.pool)
	waitFor(ctx, t, "the cursor passes every event", func() bool { return cursor(t, e.pool) >= last })
	recs := e.consume(ctx, t, topics.EventsFiat, 2*writers*each)
	seen := map[string]bool{}
	for _, rec := range recs {
		seen[topics.Header(rec, "id")] = true
	}
	if len(seen) != 2*writers*each {
		t.Fatalf("%d distinct events published, want %d", len(seen), 2*writers*each)
	}
}
