// Package relay publishes the append-only event log (the transactional
// outbox) to Kafka. It tails the log by seq and moves its cursor only after
// the broker acknowledged everything up to it, so an event is never lost and,
// after a crash between publish and cursor update, at worst sent again
// (consumers of events deduplicate on the event id).
//
// Seqs are handed out at insert and committed out of order, so "seq >
// cursor" alone would skip a row that a slow transaction commits later with
// a lower seq. The relay therefore publishes only up to a horizon proven
// final: it reads the last seq L given out and then takes an xid X; once a
// later snapshot's xmin reaches X, every transaction that held a seq <= L
// has ended (a writer takes its xid before its seq, so before L was read, so
// below X), and every row up to L is visible or never will be. Checking each
// row's own xid against xmin is not enough: a transaction with an older xid
// can take a later seq than one still running.
//
// Both orders are statements of PL/pgSQL functions (migration 0240,
// pipeline.ReadHorizon and InsertOutbox), not the plan of one statement:
// PostgreSQL 15 ran a single statement's xid before its sequence read
// (issue 43). The horizon takes no xid when no seq was handed out past what
// is already proven, so an idle relay takes none.
//
// Old rows are removed by dropping whole partitions behind the cursor and
// older than the retention window (pipeline.MaintainLog), never by DELETE.
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// lockKey is the advisory lock that makes one relay at a time the publisher,
// which keeps the outbox order on the topics.
const lockKey = 0x6f7574626f78 // "outbox"

// Relay moves event log rows to their topics.
type Relay struct {
	pool      *pgxpool.Pool
	producer  *topics.Producer
	log       *slog.Logger
	batch     int
	idle      time.Duration
	gather    time.Duration
	published prometheus.Counter
	// lastPublish and backlog are the operators' view (see New).
	lastPublish prometheus.Gauge
	backlog     prometheus.Gauge
	now         func() time.Time

	// Partitions: width in seqs, how many to keep ahead, how long a fully
	// published partition is kept, how often maintenance runs.
	width    int64
	ahead    int
	retain   time.Duration
	maintain time.Duration

	// cursor is the last published seq (-1: not read yet); safe is the
	// highest seq proven final; lastSeq is the last seq handed out, as the
	// latest horizon read it; bound and boundXid carry a horizon to prove
	// (see the package comment).
	cursor         int64
	safe           int64
	lastSeq        int64
	bound          int64
	boundXid       uint64
	haveBound      bool
	lastMaintained time.Time

	afterPublish func(ctx context.Context) error
	// campaign is how long a relay that is not (or no longer) the leader
	// waits before trying for the lock again.
	campaign time.Duration
}

// Option changes a relay setting.
type Option func(*Relay)

// WithRetention keeps published event log partitions for d (default 7 days).
func WithRetention(d time.Duration) Option { return func(r *Relay) { r.retain = d } }

// WithPartitions sets the seqs per new partition and how many are kept ahead
// (default 1,000,000 and 2).
func WithPartitions(width int64, ahead int) Option {
	return func(r *Relay) { r.width, r.ahead = width, ahead }
}

// WithAfterPublish runs hook after the broker acknowledged a batch and before
// the cursor moves. Tests use it to simulate a crash at the worst moment: a
// non-nil error stops PublishOnce with the cursor where it was.
func WithAfterPublish(hook func(ctx context.Context) error) Option {
	return func(r *Relay) { r.afterPublish = hook }
}

// WithCampaignInterval sets how long a relay that does not hold the lock
// waits before trying again (default 1 s).
func WithCampaignInterval(d time.Duration) Option { return func(r *Relay) { r.campaign = d } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(r *Relay) { r.now = now } }

// New builds a relay. reg receives its metrics: the events published, the
// time it last published or found itself caught up, and its backlog.
func New(pool *pgxpool.Pool, producer *topics.Producer, reg prometheus.Registerer, log *slog.Logger, opts ...Option) *Relay {
	published := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "platform_outbox_published_total", Help: "Outbox rows published to Kafka.",
	})
	lastPublish := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "platform_outbox_last_publish_timestamp_seconds",
		Help: "Unix time at which this relay, leading, last moved its cursor over events the broker acknowledged, " +
			"or last found no seq handed out past its cursor (caught up). Waiting for an open writer does not move " +
			"it, so time() minus the newest across relays is how long the oldest unpublished event may have waited.",
	})
	backlog := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "platform_outbox_backlog",
		Help: "Event log seqs handed out past this relay's cursor, as of its last horizon read: writing " +
			"transactions (each one row of events) not yet published, open and rolled back ones included; " +
			"0 while it does not hold the outbox lock.",
	})
	reg.MustRegister(published, lastPublish, backlog)
	r := &Relay{pool: pool, producer: producer, log: log.With("component", "relay"),
		batch: 500, idle: 20 * time.Millisecond, gather: 50 * time.Millisecond, published: published,
		lastPublish: lastPublish, backlog: backlog, now: time.Now,
		width: 1_000_000, ahead: 2, retain: 7 * 24 * time.Hour, maintain: time.Minute, cursor: -1, campaign: time.Second}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Run publishes until ctx is cancelled. While another relay holds the lock it
// waits and tries again. A leader checks before every batch that its lock
// session is alive and still holds the lock; one that lost it stops
// publishing at once and campaigns again like any other.
func (r *Relay) Run(ctx context.Context) error {
	for {
		err := r.runLocked(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, errNotLeader) {
			r.log.Warn("relay stopped, restarting", "err", err)
		}
		if errors.Is(err, errNotPrimary) {
			r.pool.Reset() // reconnect through the host list to the primary
		}
		postgres.FollowPrimary(r.pool, err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.campaign):
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
		r.backlog.Set(0) // the next leader reports it
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey)
	}()
	// A new leader starts from the stored cursor and proves a new horizon.
	r.cursor, r.haveBound = -1, false
	for {
		if err := r.loadCursor(ctx); err != nil {
			return err
		}
		if err := r.leadAndAdvance(ctx, conn); err != nil {
			return err
		}
		if r.now().Sub(r.lastMaintained) >= r.maintain {
			if err := r.Maintain(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("event log maintenance failed; retrying later", "err", err)
			}
			r.lastMaintained = r.now()
		}
		start := r.now()
		n, err := r.publishProven(ctx)
		if err != nil {
			return err
		}
		wait := r.nextWait(n, r.now().Sub(start))
		if wait <= 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// errLostLock is returned when the relay's lock session no longer holds the
// outbox lock: the connection was terminated (pg_terminate_backend, an idle
// timeout, a proxy, a failover) and with it the lock, which another relay
// may hold by now.
var errLostLock = errors.New("the relay lost the outbox lock")

// errNotPrimary is returned when the relay's server no longer takes writes
// (a demoted primary): the events are written on the new one.
var errNotPrimary = errors.New("the relay's Postgres server is read-only (no longer the primary)")

// holdsLockSQL asks whether this session holds the outbox lock: an advisory
// lock on a bigint key is (classid, objid) = its high and low 32 bits,
// objsubid 1.
const holdsLockSQL = `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
	AND classid = $1 AND objid = $2 AND objsubid = 1 AND granted), current_setting('transaction_read_only') = 'on'`

// nextWait is how long to wait before the next publish, after one that
// sent n events and took took. Nothing sent: the idle poll. At least as many
// events as a batch has rows: at once, there is a backlog. Otherwise the next
// publish starts gather after this one started: under load the relay sends
// fewer, larger batches — each costs an event-log read, a produce with its
// fsync round, and a fetch for every consumer of the topics — while an event
// waits at most gather more, on a path no API answer waits for (the answer is
// the command's reply).
func (r *Relay) nextWait(n int, took time.Duration) time.Duration {
	switch {
	case n == 0:
		return r.idle
	case n >= r.batch:
		return 0
	default:
		return r.gather - max(took, 0) // a clock that stepped back waits gather, not more
	}
}

// PublishOnce advances the horizon, sends up to one batch of event log rows
// proven final, moves the cursor once the broker acknowledged them, and
// returns how many events it sent. It may send nothing while it is still
// proving the horizon.
func (r *Relay) PublishOnce(ctx context.Context) (int, error) {
	if err := r.loadCursor(ctx); err != nil {
		return 0, err
	}
	if err := r.advance(ctx); err != nil {
		return 0, err
	}
	return r.publishProven(ctx)
}

// loadCursor reads the stored cursor when the relay has none yet (a new
// leader).
func (r *Relay) loadCursor(ctx context.Context) error {
	if r.cursor >= 0 {
		return nil
	}
	c, err := pipeline.LogCursor(ctx, r.pool)
	if err != nil {
		return err
	}
	r.cursor, r.safe = c, c
	return nil
}

// leadAndAdvance checks, on the lock's own connection, that it is alive,
// still holds the lock and is on a server that takes writes (a demoted
// primary keeps its sessions and its locks, while the events go to the new
// one), and advances the horizon in the same round trip: one implicit
// transaction instead of two, which cost a commit per publish loop (issue
// 38). It runs before every publish batch: the rest of the relay's reads go
// through the pool, which reconnects as if nothing happened, so without it
// a relay whose lock session died would go on publishing beside the one
// that took the lock over. A horizon read by a session that lost the lock
// is not used.
func (r *Relay) leadAndAdvance(ctx context.Context, conn interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}) error {
	var held, readOnly bool
	var h pipeline.Horizon
	b := &pgx.Batch{}
	b.Queue(holdsLockSQL, uint32(lockKey>>32), uint32(lockKey&0xffffffff)).QueryRow(func(row pgx.Row) error {
		return row.Scan(&held, &readOnly)
	})
	pipeline.QueueReadHorizon(b, !r.haveBound, r.safe, &h)
	err := conn.SendBatch(ctx, b).Close()
	switch {
	case !held && err != nil: // the lock check itself failed: the session is gone
		return fmt.Errorf("%w: %w", errLostLock, err)
	case !held:
		return errLostLock
	case readOnly:
		return errNotPrimary
	case err != nil:
		return fmt.Errorf("read the event log horizon on the lock's connection: %w", err)
	}
	r.moveHorizon(h)
	return nil
}

// publishProven sends up to one batch of the event log rows the horizon
// proved final and moves the cursor past them.
func (r *Relay) publishProven(ctx context.Context) (int, error) {
	if r.safe <= r.cursor {
		if r.lastSeq <= r.cursor {
			r.lastPublish.Set(float64(r.now().UnixNano()) / 1e9) // caught up
		}
		return 0, nil
	}
	entries, err := pipeline.ReadLog(ctx, r.pool, r.cursor, r.safe, r.batch)
	if err != nil {
		return 0, err
	}
	// Everything up to safe is final: what is not there was rolled back (or
	// is in a dropped partition), so the cursor can pass it.
	upTo := r.safe
	if len(entries) == r.batch {
		upTo = entries[len(entries)-1].Seq
	}
	var recs []*kgo.Record
	for _, e := range entries {
		for _, ev := range e.Events {
			rec := topics.RawRecord(ev.Topic, ev.Key, ev.Type, ev.EventID, ev.Payload)
			topics.SetTraceParent(rec, ev.TraceParent)
			recs = append(recs, rec)
		}
	}
	if len(recs) > 0 {
		if err := r.producer.PublishRecords(ctx, recs...); err != nil {
			return 0, err
		}
	}
	if r.afterPublish != nil {
		if err := r.afterPublish(ctx); err != nil {
			return 0, err
		}
	}
	if err := pipeline.SetLogCursor(context.WithoutCancel(ctx), r.pool, upTo); err != nil {
		return 0, err
	}
	r.cursor = upTo
	r.published.Add(float64(len(recs)))
	r.lastPublish.Set(float64(r.now().UnixNano()) / 1e9)
	r.backlog.Set(float64(max(r.lastSeq-r.cursor, 0)))
	r.logPublished(ctx, entries)
	return len(recs), nil
}

// logPublished logs each published event at debug level, in the trace of
// the request that caused it (the log handler adds its traceId).
func (r *Relay) logPublished(ctx context.Context, entries []pipeline.LogEntry) {
	if !r.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	for _, e := range entries {
		for _, ev := range e.Events {
			r.log.LogAttrs(trace.ContextWithRemoteSpanContext(ctx, topics.ParseTrace(ev.TraceParent)), slog.LevelDebug,
				"event published", slog.String("topic", ev.Topic), slog.String("type", ev.Type),
				slog.String("id", ev.EventID), slog.Int64("seq", e.Seq))
		}
	}
}

// advance reads one horizon: it proves the pending bound when the snapshot's
// xmin has reached its xid, and takes a new bound when none is pending.
func (r *Relay) advance(ctx context.Context) error {
	h, err := pipeline.ReadHorizon(ctx, r.pool, !r.haveBound, r.safe)
	if err != nil {
		return err
	}
	r.moveHorizon(h)
	return nil
}

// moveHorizon proves the pending bound when the snapshot's xmin has reached
// its xid, and takes a new bound when none is pending. It also records the
// last seq handed out, for the backlog.
func (r *Relay) moveHorizon(h pipeline.Horizon) {
	r.lastSeq = h.LastSeq
	r.backlog.Set(float64(max(h.LastSeq-r.cursor, 0)))
	if r.haveBound && h.Xmin >= r.boundXid {
		r.safe, r.haveBound = max(r.safe, r.bound), false
	} else if !r.haveBound && h.HasXid {
		r.bound, r.boundXid, r.haveBound = h.LastSeq, h.Xid, true
	}
}

// Maintain creates the event log partitions the next seqs need and drops the
// fully published ones older than the retention window.
func (r *Relay) Maintain(ctx context.Context) error {
	cursor, err := pipeline.LogCursor(ctx, r.pool)
	if err != nil {
		return err
	}
	created, dropped, err := pipeline.MaintainLog(ctx, r.pool, pipeline.LogMaintenance{
		Width: r.width, Ahead: r.ahead, Cursor: cursor, Before: r.now().Add(-r.retain)})
	if len(created) > 0 || len(dropped) > 0 {
		r.log.Info("event log partitions", "created", created, "dropped", dropped)
	}
	return err
}
