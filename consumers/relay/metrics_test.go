package relay_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/consumers/relay"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// gauge reads a gauge of reg, failing when it is not registered.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestRelayReportsLastPublishAndBacklog: the backlog is the seqs handed out
// past the cursor; the last-publish time moves when a batch is published
// and when the relay is caught up, not while it waits for an open writer.
func TestRelayReportsLastPublishAndBacklog(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now := time.Unix(1_800_000_000, 0)
	cl, err := topics.NewClient(e.brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	reg := prometheus.NewRegistry()
	r := relay.New(e.pool, topics.NewProducer(cl), reg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		relay.WithClock(func() time.Time { return now }))
	const lastPublish, backlog = "platform_outbox_last_publish_timestamp_seconds", "platform_outbox_backlog"
	check := func(what string, wantPublish time.Time, wantBacklog float64) {
		t.Helper()
		if got := gauge(t, reg, lastPublish); got != float64(wantPublish.Unix()) {
			t.Errorf("%s: %s = %v, want %d", what, lastPublish, got, wantPublish.Unix())
		}
		if got := gauge(t, reg, backlog); got != wantBacklog {
			t.Errorf("%s: %s = %v, want %v", what, backlog, got, wantBacklog)
		}
	}

	// Idle from the start: caught up at once.
	if _, err := r.PublishOnce(ctx); err != nil {
		t.Fatal(err)
	}
	check("idle", now, 0)

	// Three committed rows and a horizon over them, then a writer holding
	// seq 4 open.
	for i := range 3 {
		if err := pipeline.InsertOutbox(ctx, e.pool, []pipeline.OutboxRow{row(i, "")}); err != nil {
			t.Fatal(err)
		}
	}
	idle := now
	now = now.Add(time.Minute)
	if k, err := r.PublishOnce(ctx); err != nil || k != 0 {
		t.Fatalf("published %d (%v) before the horizon is proven", k, err)
	}
	check("backlog of three", idle, 3)
	w, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Rollback(ctx) }()
	if err := pipeline.InsertOutbox(ctx, w, []pipeline.OutboxRow{row(3, "")}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	published := now
	drain(ctx, t, r, e.pool, 3)
	check("three of four published", published, 1)

	// Waiting for the open writer: neither moves.
	for range 5 {
		now = now.Add(time.Minute)
		if k, err := r.PublishOnce(ctx); err != nil || k != 0 {
			t.Fatalf("published %d (%v) while seq 4 is open", k, err)
		}
	}
	check("waiting for the open writer", published, 1)

	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	drain(ctx, t, r, e.pool, 4)
	check("all published", now, 0)
	now = now.Add(time.Minute)
	if _, err := r.PublishOnce(ctx); err != nil {
		t.Fatal(err)
	}
	check("idle again", now, 0)
}
