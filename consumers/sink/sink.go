// Package sink copies every events.* topic into ClickHouse for analysts and
// for the stats and leaderboards the API serves from there. It is its own
// poll loop, not a Postgres applier: poll a batch, insert it into ClickHouse,
// park what it could not read on the DLQ, then commit the offsets. A crash
// between the insert and the commit inserts the batch again; the tables are
// deduplicated on the event id.
package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/dlq"
)

// Config configures a Sink.
type Config struct {
	// Brokers are the Kafka bootstrap brokers.
	Brokers []string
	// Group is the consumer group; default topics.GroupSink.
	Group string
	// Topics to copy; default topics.SinkTopics().
	Topics []string
	// Database is the ClickHouse database the tables live in.
	Database string
	// MaxBatch caps the records per insert. Default 5000.
	MaxBatch int
	// FlushInterval is how long records are gathered before an insert:
	// an insert happens when FlushInterval has passed since the batch's
	// first record or MaxBatch records are in, whichever comes first, and
	// on shutdown. ClickHouse wants few large inserts (each is a part it
	// merges later). Default 1s.
	FlushInterval time.Duration
}

func (c *Config) setDefaults() {
	if c.Group == "" {
		c.Group = topics.GroupSink
	}
	if len(c.Topics) == 0 {
		c.Topics = topics.SinkTopics()
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 5000
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = time.Second
	}
}

// Validate reports every missing setting.
func (c Config) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("no kafka brokers"))
	}
	if c.Database == "" {
		errs = append(errs, errors.New("no clickhouse database"))
	}
	return errors.Join(errs...)
}

// Connector hands out the ClickHouse connection, connecting when needed.
type Connector interface {
	Conn(ctx context.Context) (driver.Conn, error)
}

// Sink is the clickhouse-sink consumer group.
type Sink struct {
	cfg    Config
	conns  Connector
	client *kgo.Client
	log    *slog.Logger

	// gathered counts records taken into batches (tests).
	gathered atomic.Int64
}

// New joins the group. Offsets are committed only after the batch they
// cover is in ClickHouse.
func New(cfg Config, conns Connector, log *slog.Logger) (*Sink, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sink config: %w", err)
	}
	if conns == nil || log == nil {
		return nil, errors.New("sink: nil dependency")
	}
	client, err := topics.NewClient(cfg.Brokers,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// ClickHouse wants few large inserts: let the broker gather up to
		// 512 KiB or one second of events per fetch. Analytics may lag by
		// seconds; small inserts cost ClickHouse half a core under load.
		kgo.FetchMinBytes(512<<10),
		kgo.FetchMaxWait(time.Second),
		kgo.SessionTimeout(10*time.Second),
	)
	if err != nil {
		return nil, err
	}
	return &Sink{cfg: cfg, conns: conns, client: client, log: log.With("group", cfg.Group)}, nil
}

// Run creates the tables, then copies until ctx is cancelled.
func (s *Sink) Run(ctx context.Context) error {
	defer s.client.Close()
	if err := s.retry(ctx, "create tables", func(ctx context.Context) error {
		conn, err := s.conns.Conn(ctx)
		if err != nil {
			return err
		}
		if err := clickhouse.EnsureSchema(ctx, conn, s.cfg.Database); err != nil {
			return err
		}
		// The views are for analysts: one that cannot be made is logged,
		// and must not stop the copy.
		if err := clickhouse.EnsureViews(ctx, conn, s.cfg.Database); err != nil {
			s.log.Error("analytics views not created", "err", err)
		}
		return nil
	}); err != nil {
		return nil // shut down while ClickHouse was unreachable
	}
	// Rows sunk before the sink redacted personal data are rewritten once
	// (a long step on a large table, hence its own bound), before any new
	// row is inserted.
	if err := s.retryFor(ctx, "scrub personal data", 30*time.Minute, func(ctx context.Context) error {
		conn, err := s.conns.Conn(ctx)
		if err != nil {
			return err
		}
		n, err := clickhouse.ScrubEvents(ctx, conn, s.cfg.Database, ScrubRow)
		if n > 0 {
			s.log.Info("personal data removed from analytics rows sunk before", "rows", n)
		}
		return err
	}); err != nil {
		return nil
	}
	var batch []*kgo.Record
	var due time.Time // when the batch is inserted at the latest
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if len(batch) > 0 {
			pctx, cancel = context.WithDeadline(ctx, due)
		}
		fetches := s.client.PollRecords(pctx, s.cfg.MaxBatch-len(batch))
		cancel()
		if fetches.IsClientClosed() {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				s.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
			}
		})
		if recs := fetches.Records(); len(recs) > 0 {
			if len(batch) == 0 {
				due = time.Now().Add(s.cfg.FlushInterval)
			}
			batch = append(batch, recs...)
			s.gathered.Add(int64(len(recs)))
		}
		stopping := ctx.Err() != nil
		if len(batch) > 0 && (stopping || len(batch) >= s.cfg.MaxBatch || !time.Now().Before(due)) {
			if !s.flush(ctx, batch) {
				s.client.AllowRebalance()
				return nil // shut down before the batch was in; it is redelivered
			}
			batch = batch[:0]
		}
		if len(batch) == 0 {
			// Rebalances wait while a batch is gathered, so its offsets
			// are still ours when it is committed.
			s.client.AllowRebalance()
		}
		if stopping {
			return nil
		}
	}
}

// flush inserts the batch and only then commits its offsets. It reports
// false when it gave up: ClickHouse was unreachable until shutdown (nothing
// is committed, the batch is redelivered). On shutdown it still tries the
// insert for up to 10 s, so a clean stop loses no gathered rows and commits
// them.
func (s *Sink) flush(ctx context.Context, recs []*kgo.Record) bool {
	rows, parked := Convert(recs, s.log)
	ictx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ictx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
	}
	if err := s.retry(ictx, "insert batch", func(ctx context.Context) error {
		conn, err := s.conns.Conn(ctx)
		if err != nil {
			return err
		}
		return clickhouse.Insert(ctx, conn, s.cfg.Database, rows)
	}); err != nil {
		return false
	}
	// What did not read is on the DLQ before the offsets past it are
	// committed.
	if len(parked) > 0 {
		if err := s.retry(ictx, "park unreadable events", func(ctx context.Context) error {
			return s.client.ProduceSync(ctx, parked...).FirstErr()
		}); err != nil {
			return false
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.client.CommitRecords(cctx, recs...); err != nil {
		s.log.Warn("offset commit failed; the batch will be inserted again and deduplicated", "err", err)
	}
	return true
}

// retry runs f until it succeeds, backing off; it gives up only when ctx is
// cancelled (returning ctx's error).
func (s *Sink) retry(ctx context.Context, what string, f func(context.Context) error) error {
	return s.retryFor(ctx, what, 30*time.Second, f)
}

// retryFor is retry with each attempt bounded by limit.
func (s *Sink) retryFor(ctx context.Context, what string, limit time.Duration, f func(context.Context) error) error {
	backoff := 100 * time.Millisecond
	for {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		err := f(fctx)
		cancel()
		if err == nil {
			return nil
		}
		s.log.Warn(what+" failed, retrying", "backoff", backoff, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// Convert maps records to analytics rows: every record to the events table,
// ledger.entry_added also to ledger_entries, score.updated to
// reputation_events, and the events that create or change a user, wallet,
// campaign or proposal to its dimension table (dimensions.go). Bundles are
// expanded into their events. Events with the same id in one batch are
// kept once. What does not read — a record that is not an event, a bundle
// that does not expand, an event whose data its table cannot take (its
// event row is kept) — is returned as DLQ records (topics/dlq.Park) for
// the caller to park before it commits the offsets. Personal data is
// removed first (redact.go).
func Convert(recs []*kgo.Record, log *slog.Logger) (clickhouse.Rows, []*kgo.Record) {
	var out clickhouse.Rows
	var parked []*kgo.Record
	park := func(rec *kgo.Record, err error) {
		log.Warn("parking unreadable event", "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", err)
		parked = append(parked, dlq.Park(rec, fmt.Errorf("analytics sink: %w", err)))
	}
	expanded, bad := topics.ExpandChecked(recs)
	for _, u := range bad {
		park(u.Rec, u.Err)
	}
	seen := make(map[string]bool, len(recs))
	for _, rec := range expanded {
		env, err := schemas.Read(rec.Value)
		if err == nil && env.ID == "" {
			err = errors.New("the event has no id")
		}
		if err != nil {
			park(rec, err)
			continue
		}
		if seen[env.ID] {
			continue
		}
		seen[env.ID] = true
		out.Events = append(out.Events, redactRow(clickhouse.EventRow{ID: env.ID, Topic: rec.Topic, Type: env.Type,
			Key: env.Key, ActorUserID: env.ActorUserID, OccurredAt: env.OccurredAt, Data: string(env.Data)}))
		switch env.Type {
		case schemas.TypeLedgerEntryAdded:
			e, err := schemas.DataAs[schemas.LedgerEntry](env)
			if err != nil {
				park(rec, fmt.Errorf("ledger entry %s: %w", env.ID, err))
				continue
			}
			ts, err := time.Parse(ledger.TimestampLayout, e.Timestamp)
			if err != nil {
				ts, _ = time.Parse(time.RFC3339Nano, e.Timestamp)
			}
			row := clickhouse.LedgerRow{ID: e.ID, Height: e.Height, Kind: e.Kind, ActorUserID: e.ActorUserID,
				SourceID: e.SourceID, Timestamp: ts, PrevHash: e.PrevHash, Hash: e.Hash}
			if e.AmountCents != nil {
				row.HasAmount, row.AmountCents = true, *e.AmountCents
			}
			if e.Currency != nil {
				row.Currency = *e.Currency
			}
			out.Ledger = append(out.Ledger, row)
		case schemas.TypeScoreUpdated:
			u, err := schemas.DataAs[schemas.ScoreUpdated](env)
			if err != nil {
				park(rec, fmt.Errorf("score update %s: %w", env.ID, err))
				continue
			}
			out.Reputation = append(out.Reputation, clickhouse.ReputationRow{ID: env.ID, EventID: u.EventID,
				UserID: u.UserID, Kind: u.Kind, SourceModule: u.SourceModule, Weight: u.Weight, NewScore: u.NewScore,
				PreviousRank: u.PreviousRank, NewRank: u.NewRank, Seq: u.Seq, OccurredAt: donorTime(u.Kind, env.OccurredAt),
				SourceID: redactScoreSource(u.Kind, u.SourceID)})
		default:
			if err := convertDimension(env, &out); err != nil {
				park(rec, fmt.Errorf("%s %s: %w", env.Type, env.ID, err))
			}
		}
	}
	return out, parked
}
