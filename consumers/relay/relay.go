// Package relay publishes the transactional outbox to Kafka: rows are sent
// in insertion order and deleted once the broker acknowledged them, so an
// emission is never lost and, after a crash between publish and delete, at
// worst sent again (consumers of events deduplicate on the event id).
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// lockKey is the advisory lock that makes one relay at a time the publisher,
// which keeps the outbox order on the topics.
const lockKey = 0x6f7574626f78 // "outbox"

// Relay moves outbox rows to their topics.
type Relay struct {
	pool      *pgxpool.Pool
	producer  *topics.Producer
	log       *slog.Logger
	batch     int
	idle      time.Duration
	published prometheus.Counter
}

// New builds a relay. reg receives its metrics.
func New(pool *pgxpool.Pool, producer *topics.Producer, reg prometheus.Registerer, log *slog.Logger) *Relay {
	published := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "platform_outbox_published_total", Help: "Outbox rows published to Kafka.",
	})
	reg.MustRegister(published)
	return &Relay{pool: pool, producer: producer, log: log.With("component", "relay"),
		batch: 1000, idle: 20 * time.Millisecond, published: published}
}

// Run publishes until ctx is cancelled. While another relay holds the lock it
// waits and tries again.
func (r *Relay) Run(ctx context.Context) error {
	for {
		err := r.runLocked(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, errNotLeader) {
			r.log.Warn("relay stopped, restarting", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// errNotLeader is returned while another relay publishes.
var errNotLeader = errors.New("another relay holds the outbox lock")

func (r *Relay) runLocked(ctx context.Context) error {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire relay connection: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey).Scan(&got); err != nil {
		return fmt.Errorf("take outbox lock: %w", err)
	}
	if !got {
		return errNotLeader
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey)
	}()
	for {
		n, err := r.PublishOnce(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.idle):
		}
	}
}

// PublishOnce sends up to one batch of outbox rows and deletes them, and
// returns how many it sent.
func (r *Relay) PublishOnce(ctx context.Context) (int, error) {
	rows, err := pipeline.FetchOutbox(ctx, r.pool, r.batch)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	recs := make([]*kgo.Record, len(rows))
	ids := make([]int64, len(rows))
	for i, row := range rows {
		recs[i] = topics.RawRecord(row.Topic, row.Key, row.Type, row.EventID, row.Payload)
		ids[i] = row.ID
	}
	if err := r.producer.PublishRecords(ctx, recs...); err != nil {
		return 0, err
	}
	if err := pipeline.DeleteOutbox(context.WithoutCancel(ctx), r.pool, ids); err != nil {
		return 0, err
	}
	r.published.Add(float64(len(rows)))
	return len(rows), nil
}
