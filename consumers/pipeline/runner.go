package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// Config configures a Runner.
type Config struct {
	// Group is the consumer group name (a topics.Group* constant).
	Group string
	// Topics are the command topics the group consumes.
	Topics []string
	// Brokers are the Kafka bootstrap brokers.
	Brokers []string
	// MaxBatch caps the records polled at once. Default 1000.
	MaxBatch int
	// MinBytes and MaxWait let the broker gather records before answering a
	// fetch: consumers off the request path (ledger, reputation) apply fewer,
	// larger batches and spend less per record. Default: answer as soon as
	// anything is there, waiting at most 100 ms.
	MinBytes int32
	MaxWait  time.Duration
	// Workers is how many transactions apply a poll concurrently, each over
	// its own set of partitions (so per-key order is kept). Handlers must lock
	// shared rows in a fixed order. Default 1.
	Workers int
	// Overlap says when the next poll is read and started while a batch
	// commits (order.go). Default OverlapBacklog.
	Overlap Overlap
	// ParkAfter is how many times a command that fails on its own with an
	// error that is not transient (postgres.Transient: a data or constraint
	// error, a handler panic) is tried alone, with backoff, before it is
	// parked on the DLQ with a 500 reply. A transient error is retried for
	// as long as it takes and never parks. Default 3.
	ParkAfter int
	// AfterDBCommit, when set, runs after the Postgres commit and before the
	// replies and the offset commit. Tests use it to simulate a crash at the
	// worst moment: a non-nil error stops the runner without committing
	// offsets.
	AfterDBCommit func(ctx context.Context) error
	// Gather, when set, holds a poll that returned records open for more
	// while the runner is busy, at most this long (gather.go). Default 0:
	// off.
	Gather time.Duration
	// AcceptGap resumes a partition whose records from the stored position
	// are gone at its first record, auditing the skip (position.go);
	// without it the runner stops on such a partition.
	AcceptGap bool
}

// Overlap is when a runner reads the next poll while a batch commits.
//
// Overlapping takes the gap between one commit and the next batch's reads
// (replies, offsets, the poll, decoding, a round trip) off each batch, but
// it closes the next batch before the commit ends: a command arriving
// during that commit waits for one more batch. With few commands waiting
// (a closed loop of clients, each waiting for its reply) that costs more
// than it saves: BenchmarkPipelineRoundTrip measured 64 senders slower
// overlapped than not. With a backlog the next batch is waiting anyway, and
// overlapping only saves.
type Overlap int

const (
	// OverlapBacklog overlaps when records are already waiting once a
	// poll's batches have started (the poll was capped by MaxBatch, or more
	// arrived meanwhile); otherwise the next poll is read after the batch.
	OverlapBacklog Overlap = iota
	// OverlapAlways reads the next poll as soon as a batch sends its
	// COMMIT.
	OverlapAlways
	// OverlapNever reads the next poll only once the batch before is
	// committed, replied and marked.
	OverlapNever
)

func (c *Config) setDefaults() {
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1000
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.MinBytes <= 0 {
		c.MinBytes = 1
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 100 * time.Millisecond
	}
	if c.ParkAfter <= 0 {
		c.ParkAfter = 3
	}
}

// Validate reports every missing setting.
func (c Config) Validate() error {
	var errs []error
	if c.Group == "" {
		errs = append(errs, errors.New("consumer group is empty"))
	}
	if len(c.Topics) == 0 {
		errs = append(errs, errors.New("no topics to consume"))
	}
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("no kafka brokers"))
	}
	return errors.Join(errs...)
}

// Runner consumes one group and applies its records through a Handler.
type Runner struct {
	cfg     Config
	pool    *pgxpool.Pool
	handler Handler
	metrics *Metrics
	log     *slog.Logger
	client  *kgo.Client
	// lookup is the batch's one "applied before?" statement.
	lookup string
	// bundled are the topics whose emitted events are written as bundles.
	bundled map[string]bool
	// locks are the workers' advisory lock keys; last is the turn of each
	// worker's latest batch (used by Run's goroutine only).
	locks []int64
	last  []*turn
	// rebalance is signalled when a rebalance waits for the runner to allow
	// it: Run then stops overlapping until it has.
	rebalance       chan struct{}
	rebalanceWanted atomic.Bool
	// ready is closed once client is set; gaps stop Run (position.go).
	ready chan struct{}
	gaps  gaps
	// lastRecords is when a poll last returned records (gather.go).
	lastRecords time.Time
}

// NewRunner joins the consumer group. Offsets are marked by Run only after
// the batch they cover is committed in Postgres.
func NewRunner(cfg Config, pool *pgxpool.Pool, handler Handler, metrics *Metrics, log *slog.Logger) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("runner config: %w", err)
	}
	if pool == nil || handler == nil || metrics == nil || log == nil {
		return nil, errors.New("runner: nil dependency")
	}
	r := &Runner{cfg: cfg, pool: pool, handler: handler, metrics: metrics,
		log: log.With("group", cfg.Group), rebalance: make(chan struct{}, 1), ready: make(chan struct{}),
		locks: make([]int64, cfg.Workers), last: make([]*turn, cfg.Workers)}
	// The keys are this runner's own: they order its batches. Two processes
	// of one group own different partitions and must not wait for each
	// other (that would undo scaling out). A partition moves between them
	// with nothing in flight when its owner allows the rebalance (Run does
	// only then), but not when the owner stalled past its session timeout:
	// that zombie may still commit its batch beside the new owner's, and
	// processed_commands and the modules' unique constraints, not this
	// lock, keep a command from applying twice.
	instance := schemas.NewID()
	for w := range r.locks {
		r.locks[w] = pipeline.OrderLockKey(cfg.Group+"/"+instance, w, cfg.Workers)
	}
	client, err := topics.NewClient(cfg.Brokers,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		// Offsets are marked only after the batch they cover is committed in
		// Postgres, and committed in the background: a crash re-delivers at
		// most the last interval's records, which processed_commands answers
		// without applying them again.
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(250*time.Millisecond),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsCallbackBlocked(func(context.Context, *kgo.Client) { r.wantRebalance() }),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AdjustFetchOffsetsFn(r.adjustOffsets),
		kgo.FetchMinBytes(cfg.MinBytes),
		kgo.FetchMaxWait(cfg.MaxWait),
		kgo.SessionTimeout(10*time.Second),
	)
	if err != nil {
		return nil, err
	}
	recorded := ""
	if rec, ok := handler.(Recorder); ok {
		recorded = rec.RecordedSQL()
	}
	r.client, r.lookup, r.bundled = client, pipeline.LookupAppliedSQL(recorded), topics.BundledTopics()
	close(r.ready)
	return r, nil
}

func (r *Runner) wantRebalance() {
	r.rebalanceWanted.Store(true)
	select {
	case r.rebalance <- struct{}{}:
	default:
	}
}

// consume consumes until ctx is cancelled. A batch in progress when ctx is
// cancelled is finished and its offsets committed before Run returns; the
// client then leaves the group.
//
// While one poll's batches commit, Run may read the next poll and start
// applying it (Config.Overlap, order.go); it marks a poll's offsets only
// after the one before it. It allows a rebalance only with nothing in
// flight.
func (r *Runner) consume(ctx context.Context) error {
	defer r.client.Close()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := r.client.CommitMarkedOffsets(cctx); err != nil {
			r.log.Warn("final offset commit failed; the last batch will be redelivered and deduplicated", "err", err)
		}
	}()
	var inflight *round
	defer func() {
		// Stopping on an error: a batch still in flight ends before the
		// client closes, its offsets not marked (it is redelivered).
		if inflight != nil {
			<-inflight.done
		}
	}()
	for {
		fetches := r.poll(ctx, inflight)
		fetches = r.gather(ctx, fetches, inflight)
		if fetches.IsClientClosed() {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				r.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
			}
		})
		var next *round
		if recs := fetches.Records(); len(recs) > 0 {
			// The batch is finished even when shutdown starts meanwhile, so
			// that its offsets are committed and nothing is redelivered.
			next = r.start(context.WithoutCancel(ctx), ctx, recs)
		}
		prev := inflight
		inflight = next
		if prev != nil {
			if err := r.finish(prev); err != nil {
				r.client.AllowRebalance()
				return err
			}
		}
		r.recordLag(fetches)
		overlap := ctx.Err() == nil && !r.rebalanceWanted.Swap(false) && r.overlapNext()
		if inflight != nil && overlap {
			continue
		}
		if inflight != nil {
			err := r.finish(inflight)
			inflight = nil
			if err != nil {
				r.client.AllowRebalance()
				return err
			}
		}
		r.client.AllowRebalance()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// overlapNext reports whether to read the next poll while the one in
// flight commits.
func (r *Runner) overlapNext() bool {
	switch r.cfg.Overlap {
	case OverlapAlways:
		return true
	case OverlapNever:
		return false
	default:
		return r.client.BufferedFetchRecords() > 0
	}
}

// poll reads the next records. With a poll in flight it first waits until
// that poll's transactions have sent their COMMIT (so the next batch holds
// what arrived meanwhile), and it returns nothing once that poll is done or
// a rebalance waits, so that Run can mark it and allow the rebalance.
func (r *Runner) poll(ctx context.Context, inflight *round) kgo.Fetches {
	if inflight == nil {
		return r.client.PollRecords(ctx, r.cfg.MaxBatch)
	}
	select {
	case <-inflight.committing:
	case <-inflight.done:
		return nil
	case <-r.rebalance:
		r.rebalanceWanted.Store(true)
		return nil
	case <-ctx.Done():
		return nil
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-inflight.done:
		case <-r.rebalance:
			r.rebalanceWanted.Store(true)
		case <-pctx.Done():
		}
		cancel()
	}()
	return r.client.PollRecords(pctx, r.cfg.MaxBatch)
}

func (r *Runner) recordLag(fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		last := p.Records[len(p.Records)-1].Offset
		r.metrics.Lag.WithLabelValues(r.cfg.Group, p.Topic, strconv.Itoa(int(p.Partition))).
			Set(float64(p.HighWatermark - last - 1))
	})
}

// round is one poll being applied by its workers.
type round struct {
	recs       []*kgo.Record
	committing chan struct{} // every batch of the poll sent its COMMIT, or ended
	done       chan struct{} // every batch of the poll is finished
	errs       []error
}

// start applies one poll, split over the workers by partition, each batch
// after the same worker's batch of the poll before (which may still be
// committing).
func (r *Runner) start(ctx, stop context.Context, recs []*kgo.Record) *round {
	groups := make([][]*kgo.Record, r.cfg.Workers)
	if r.cfg.Workers == 1 {
		groups[0] = recs
	} else {
		for _, rec := range recs {
			w := partitionWorker(rec.Topic, rec.Partition, r.cfg.Workers)
			groups[w] = append(groups[w], rec)
		}
	}
	rd := &round{recs: recs, committing: make(chan struct{}), done: make(chan struct{}), errs: make([]error, len(groups))}
	var turns []*turn
	var wg sync.WaitGroup
	for w, g := range groups {
		if len(g) == 0 {
			continue
		}
		at := place{lock: r.locks[w], before: r.last[w], own: newTurn()}
		if at.before != nil {
			select {
			case <-at.before.done:
				at.before = nil
			default:
				r.metrics.Overlapped.WithLabelValues(r.cfg.Group).Inc()
			}
		}
		r.last[w] = at.own
		turns = append(turns, at.own)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.errs[w] = r.processGroup(ctx, stop, g, at)
		}()
	}
	go func() {
		for _, t := range turns {
			<-t.committing
		}
		close(rd.committing)
	}()
	go func() {
		wg.Wait()
		close(rd.done)
	}()
	return rd
}

// finish waits for a poll to be applied and marks its offsets. It returns
// an error only when the runner must stop without committing offsets
// (shutdown during a retry loop, or the AfterDBCommit hook).
func (r *Runner) finish(rd *round) error {
	<-rd.done
	if err := errors.Join(rd.errs...); err != nil {
		return err
	}
	r.client.MarkCommitRecords(rd.recs...)
	return nil
}

// partitionWorker maps a topic partition to a worker, always the same one.
func partitionWorker(topic string, partition int32, workers int) int {
	h := uint32(partition)
	for i := 0; i < len(topic); i++ {
		h = h*31 + uint32(topic[i])
	}
	return int(h % uint32(workers))
}

// processGroup applies records of a fixed set of partitions in one
// transaction (split only to isolate a failing command).
func (r *Runner) processGroup(ctx, stop context.Context, recs []*kgo.Record, at place) (err error) {
	defer func() { at.own.finish(err != nil) }()
	start := time.Now()
	cmds := make([]Command, 0, len(recs))
	expanded, parked := r.expand(recs)
	var refused []*kgo.Record
	for _, rec := range expanded {
		env, err := schemas.Decode(rec.Value)
		if err != nil {
			r.log.Warn("parking unreadable record", "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", err)
			parked = append(parked, dlqRecord(rec, err))
			continue
		}
		if field, bad := schemas.BadText(rec.Value); bad {
			// Refused on its own, before the batch's transaction: Postgres would
			// fail the whole batch on it. The answer is deterministic, so a
			// redelivery gets the same one without a stored row.
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "refused").Inc()
			if env.ReplyTo != "" {
				rep, err := replyRecord(env, schemas.Reply{CommandID: env.ID, Status: 422,
					Body: schemas.ErrorJSON(schemas.CodeValidationFailed, "the command carries NUL characters or invalid UTF-8",
						map[string]any{"fields": map[string]string{field: "must be valid UTF-8 text without NUL characters"}})})
				if err != nil {
					return err
				}
				refused = append(refused, rep)
			}
			continue
		}
		cmds = append(cmds, Command{Env: env, Topic: rec.Topic})
	}

	positions := positionsOf(recs)
	if len(parked) == 0 {
		at.pos = positions
	}
	replies := refused
	if len(cmds) > 0 {
		applied, stillParked, err := r.applyWithRetry(ctx, stop, cmds, parked, at)
		if err != nil {
			return err
		}
		replies, parked = append(replies, applied...), stillParked
		if r.cfg.AfterDBCommit != nil {
			if err := r.cfg.AfterDBCommit(ctx); err != nil {
				return err
			}
		}
	}
	if err := r.produceUntilDone(ctx, stop, parked); err != nil {
		return err
	}
	if err := r.savePositions(ctx, stop, positions); err != nil {
		return err
	}
	for _, p := range parked {
		r.metrics.DLQ.WithLabelValues(r.cfg.Group, p.Topic).Inc()
	}
	// Replies are sent without waiting: a lost reply only makes the waiting
	// request time out, and its retry gets the stored result.
	for _, rep := range replies {
		r.client.Produce(ctx, rep, r.onReplySent)
	}
	r.metrics.BatchSize.WithLabelValues(r.cfg.Group).Observe(float64(len(recs)))
	r.metrics.ApplySecs.WithLabelValues(r.cfg.Group).Observe(time.Since(start).Seconds())
	return nil
}

// expand unpacks the bundles among recs (topics.ExpandChecked) and returns
// the DLQ records of what did not read in them: a bundle whose event list
// does not decode, or an event in one without an id, type and key, is
// parked for an operator rather than lost without a trace.
func (r *Runner) expand(recs []*kgo.Record) ([]*kgo.Record, []*kgo.Record) {
	out, bad := topics.ExpandChecked(recs)
	var parked []*kgo.Record
	for _, u := range bad {
		r.log.Warn("parking unreadable bundled record", "topic", u.Rec.Topic, "partition", u.Rec.Partition,
			"offset", u.Rec.Offset, "err", u.Err)
		parked = append(parked, dlqRecord(u.Rec, u.Err))
	}
	return out, parked
}

func (r *Runner) onReplySent(_ *kgo.Record, err error) {
	if err != nil {
		r.log.Warn("sending a reply failed; the request will time out and its retry gets the stored result", "err", err)
	}
}

// applyWithRetry applies cmds, retrying transient failures with backoff for
// as long as it takes (nothing may be dropped), and isolating a command that
// fails on its own: that one is tried Config.ParkAfter times, then parked on
// the DLQ with a 500 reply. Only
// the first transaction overlaps the batch before (at.before); when that
// batch did not commit first, this one waits until it is finished and is
// applied again after it.
func (r *Runner) applyWithRetry(ctx, stop context.Context, cmds []Command, parked []*kgo.Record, at place) ([]*kgo.Record, []*kgo.Record, error) {
	backoff := 50 * time.Millisecond
	alone := 0 // failed attempts of a single command that is not transient
	for {
		replies, err := r.applyBatch(ctx, cmds, at)
		if at.own != nil {
			at.own.end(err == nil)
			before := at.before
			at.before, at.own = nil, nil
			if errors.Is(err, errBeforeFailed) {
				r.metrics.Redone.WithLabelValues(r.cfg.Group).Inc()
				<-before.done
				if before.failed {
					return nil, nil, err
				}
				continue
			}
		}
		if err == nil {
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "ok").Add(float64(len(cmds)))
			return replies, parked, nil
		}
		switch {
		case poisoned(err) && len(cmds) > 1:
			// Split the batch so one bad command cannot hold back the others.
			var all []*kgo.Record
			for _, c := range cmds {
				rep, p, err := r.applyWithRetry(ctx, stop, []Command{c}, nil, place{lock: at.lock})
				if err != nil {
					return nil, nil, err
				}
				all = append(all, rep...)
				parked = append(parked, p...)
			}
			return all, parked, nil
		case poisoned(err) && r.parkNow(&alone):
			r.log.Error("command failed; parking it", "type", cmds[0].Env.Type, "id", cmds[0].Env.ID, "err", err)
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "failed").Inc()
			parked = append(parked, dlqEnvelope(cmds[0], err))
			return failedReply(cmds[0]), parked, nil
		case poisoned(err):
			r.log.Warn("command failed on its own, trying it again before parking it", "type", cmds[0].Env.Type,
				"id", cmds[0].Env.ID, "attempt", alone, "of", r.cfg.ParkAfter, "err", err)
		default:
			r.log.Warn("batch failed, retrying", "records", len(cmds), "backoff", backoff, "err", err)
			postgres.FollowPrimary(r.pool, err)
		}
		select {
		case <-stop.Done():
			return nil, nil, fmt.Errorf("shutdown while retrying a batch: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// A batch is applied READ COMMITTED whatever the server's or the role's
// default_transaction_isolation: the order lock orders batches only when
// each statement after it reads what the batch before committed (under
// REPEATABLE READ the reads would see the snapshot of BEGIN, taken before
// the lock was granted), and the handlers' lock-then-read steps rely on the
// same (a row inserted by another applier while this one waited is seen).
var applyTxOptions = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// beginApplySQL is applyTxOptions for a pipelined batch's BEGIN.
const beginApplySQL = "BEGIN ISOLATION LEVEL READ COMMITTED"

// poisoned reports whether err may be the command's own fault, so that the
// batch is split and a command failing alone is eventually parked. Any
// other error is transient: the batch is retried whole, for as long as it
// takes, its offsets unmarked and its clients waiting.
func poisoned(err error) bool {
	return errors.Is(err, ErrPanicked) || !postgres.Transient(err)
}

// parkNow counts one more failed attempt of a command tried alone and
// reports whether it has had its Config.ParkAfter attempts.
func (r *Runner) parkNow(attempts *int) bool {
	*attempts++
	return *attempts >= r.cfg.ParkAfter
}

// applyBatch runs one transaction: take the worker's order lock, look up
// which commands were applied before, apply the rest, record them with
// their replies, queue their emissions, commit. It returns the reply
// records to send. A Pipelined handler's batch takes two round trips; any
// other takes one per statement. Overlapping the batch before (at.before),
// it commits only after that one did, else it rolls back with
// errBeforeFailed.
func (r *Runner) applyBatch(ctx context.Context, cmds []Command, at place) ([]*kgo.Record, error) {
	if !at.waitLocked() {
		return nil, errBeforeFailed
	}
	if ph, ok := r.handler.(Pipelined); ok {
		replies, done, err := r.applyPipelined(ctx, ph, cmds, at)
		if done || err != nil {
			return replies, err
		}
	}
	begun, err := r.pool.BeginTx(ctx, applyTxOptions)
	if err != nil {
		return nil, fmt.Errorf("begin batch: %w", err)
	}
	trips := 1 // BEGIN
	defer func() { r.metrics.RoundTrips.WithLabelValues(r.cfg.Group).Add(float64(trips)) }()
	tx := countingTx{Tx: begun, n: &trips}
	defer func() { _ = tx.Rollback(ctx) }()

	lookup := &pgx.Batch{}
	pipeline.QueueOrderLock(lookup, at.lock)
	seen := make(map[string]pipeline.Processed)
	r.queueLookup(lookup, commandIDs(cmds), seen)
	r.queuePositions(lookup, at)
	if err := tx.SendBatch(ctx, lookup).Close(); err != nil {
		return nil, fmt.Errorf("lock and look up batch: %w", err)
	}
	at.own.hold()
	s := sortOut(cmds, seen)
	if len(s.fresh) > 0 {
		outcomes, err := r.applySafely(ctx, tx, s.fresh)
		if err != nil {
			return nil, fmt.Errorf("apply %d commands: %w", len(s.fresh), err)
		}
		processed, outbox, err := s.record(outcomes, r.bundled)
		if err != nil {
			return nil, err
		}
		if err := pipeline.InsertProcessed(ctx, tx, processed); err != nil {
			return nil, err
		}
		if err := pipeline.InsertOutbox(ctx, tx, outbox); err != nil {
			return nil, err
		}
	}
	if !at.mayCommit() {
		return nil, errBeforeFailed
	}
	at.own.commit()
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit batch: %w", err)
	}
	positionsCommitted(at)
	return s.replies(cmds)
}

// applyPipelined applies the batch of a Pipelined handler in two round
// trips on one connection: BEGIN, the processed-command lookup and the
// handler's reads; then the handler's writes, the processed rows, the event
// log row and COMMIT. A statement that fails makes Postgres skip the rest
// of its round trip, COMMIT included, and the transaction is rolled back.
// done is false when the handler declines the batch (Load returns nil).
func (r *Runner) applyPipelined(ctx context.Context, ph Pipelined, cmds []Command, at place) (replies []*kgo.Record, done bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("handler panicked", "group", r.cfg.Group, "commands", len(cmds), "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
			replies, done, err = nil, true, fmt.Errorf("%w: %v", ErrPanicked, p)
		}
	}()
	reads := &pgx.Batch{}
	reads.Queue(beginApplySQL)
	// The lock goes first in the same round trip: the statements after it
	// wait in Postgres for the batch before to end, then read what it
	// committed.
	pipeline.QueueOrderLock(reads, at.lock)
	seen := make(map[string]pipeline.Processed)
	r.queueLookup(reads, commandIDs(cmds), seen)
	loaded := ph.Load(cmds, reads)
	if loaded == nil {
		return nil, false, nil
	}
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("acquire a connection: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// On a broken connection this fails too, and Release then
			// closes the connection, which is not idle.
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
	}()
	trips := 1
	defer func() { r.metrics.RoundTrips.WithLabelValues(r.cfg.Group).Add(float64(trips)) }()
	if err := conn.SendBatch(ctx, reads).Close(); err != nil {
		return nil, true, fmt.Errorf("begin batch and load: %w", err)
	}
	at.own.hold()
	s := sortOut(cmds, seen)
	writes := &pgx.Batch{}
	if len(s.fresh) > 0 {
		outcomes, err := loaded.Decide(ctx, s.fresh, writes)
		if err != nil {
			return nil, true, fmt.Errorf("apply %d commands: %w", len(s.fresh), err)
		}
		processed, outbox, err := s.record(outcomes, r.bundled)
		if err != nil {
			return nil, true, err
		}
		pipeline.QueueInsertProcessed(writes, processed)
		pipeline.QueueInsertOutbox(writes, outbox)
	}
	r.queuePositions(writes, at)
	writes.Queue("COMMIT")
	if !at.mayCommit() {
		return nil, true, errBeforeFailed
	}
	at.own.commit()
	trips++
	if err := conn.SendBatch(ctx, writes).Close(); err != nil {
		return nil, true, fmt.Errorf("write and commit batch: %w", err)
	}
	committed = true
	positionsCommitted(at)
	replies, err = s.replies(cmds)
	return replies, true, err
}

// queueLookup queues the one lookup of the commands among ids that were
// applied before: processed_commands, and the handler's own records when
// it is a Recorder. Closing b fills seen.
func (r *Runner) queueLookup(b *pgx.Batch, ids []string, seen map[string]pipeline.Processed) {
	rec, _ := r.handler.(Recorder)
	pipeline.QueueLookupApplied(b, r.lookup, ids, func(p pipeline.Processed) { seen[p.CommandID] = p },
		func(id, hash, record string) error {
			if rec == nil {
				return fmt.Errorf("command %s has a record but the handler keeps none", id)
			}
			status, body, err := rec.Recorded(record)
			if err != nil {
				return err
			}
			seen[id] = pipeline.Processed{CommandID: id, RequestHash: hash, Status: status, Body: body}
			return nil
		})
}

func commandIDs(cmds []Command) []string {
	ids := make([]string, len(cmds))
	for i, c := range cmds {
		ids[i] = c.Env.ID
	}
	return ids
}

// sorted is a batch split into the commands applied before (answered from
// their stored result), the repeats of an id inside the batch, and the
// fresh commands to apply.
type sorted struct {
	results  []schemas.Reply
	dupOf    map[int]int // a repeated id inside the batch -> its first index
	fresh    []Command
	freshIdx []int
}

func sortOut(cmds []Command, seen map[string]pipeline.Processed) *sorted {
	s := &sorted{results: make([]schemas.Reply, len(cmds)), dupOf: make(map[int]int)}
	first := make(map[string]int, len(cmds))
	for i, c := range cmds {
		if p, ok := seen[c.Env.ID]; ok {
			s.results[i] = storedReply(c.Env, p.RequestHash, p.Status, p.Body)
			continue
		}
		if j, ok := first[c.Env.ID]; ok {
			s.dupOf[i] = j
			continue
		}
		first[c.Env.ID] = i
		s.fresh = append(s.fresh, c)
		s.freshIdx = append(s.freshIdx, i)
	}
	return s
}

// record takes the outcomes of the fresh commands: their results, their
// processed rows and their event log rows. The events emitted to a bundled
// topic are written as few bundle rows after the others.
func (s *sorted) record(outcomes []Outcome, bundled map[string]bool) ([]pipeline.Processed, []pipeline.OutboxRow, error) {
	if len(outcomes) != len(s.fresh) {
		return nil, nil, fmt.Errorf("handler returned %d outcomes for %d commands", len(outcomes), len(s.fresh))
	}
	processed := make([]pipeline.Processed, 0, len(s.fresh))
	var outbox []pipeline.OutboxRow
	var toBundle map[string][]schemas.Envelope
	var bundleOrder []string
	for k, c := range s.fresh {
		o := outcomes[k]
		if !o.SelfRecorded && (!o.Unrecorded || c.Env.ReplyTo != "") {
			processed = append(processed, pipeline.Processed{CommandID: c.Env.ID, CommandType: c.Env.Type,
				RequestHash: c.Env.RequestHash, Status: o.Status, Body: o.Body})
		}
		s.results[s.freshIdx[k]] = schemas.Reply{CommandID: c.Env.ID, Status: o.Status, Body: o.Body}
		for _, e := range o.Emit {
			if bundled[e.Topic] {
				if toBundle == nil {
					toBundle = map[string][]schemas.Envelope{}
				}
				if _, ok := toBundle[e.Topic]; !ok {
					bundleOrder = append(bundleOrder, e.Topic)
				}
				toBundle[e.Topic] = append(toBundle[e.Topic], e.Env)
				continue
			}
			row, err := pipeline.EventRow(e.Topic, e.Env)
			if err != nil {
				return nil, nil, err
			}
			outbox = append(outbox, row)
		}
	}
	for _, topic := range bundleOrder {
		bundles, err := topics.Bundles(topic, toBundle[topic], time.Now())
		if err != nil {
			return nil, nil, err
		}
		for _, b := range bundles {
			row, err := pipeline.EventRow(topic, b)
			if err != nil {
				return nil, nil, err
			}
			outbox = append(outbox, row)
		}
	}
	return processed, outbox, nil
}

// replies builds the reply records of a committed batch; duplicates inside
// the batch answer like their first occurrence.
func (s *sorted) replies(cmds []Command) ([]*kgo.Record, error) {
	for i, j := range s.dupOf {
		s.results[i] = storedReply(cmds[i].Env, cmds[j].Env.RequestHash, s.results[j].Status, s.results[j].Body)
	}
	var replies []*kgo.Record
	for i, c := range cmds {
		if c.Env.ReplyTo == "" {
			continue
		}
		rec, err := replyRecord(c.Env, s.results[i])
		if err != nil {
			return nil, err
		}
		replies = append(replies, rec)
	}
	return replies, nil
}

// storedReply answers a command that was applied before: the stored result
// when the request is the same, 409 when the same id came with another body.
func storedReply(env schemas.Envelope, storedHash string, status int, body []byte) schemas.Reply {
	if storedHash != env.RequestHash {
		return schemas.Reply{CommandID: env.ID, Status: 409, Body: schemas.IdempotencyConflict()}
	}
	return schemas.Reply{CommandID: env.ID, Status: status, Body: body, Replayed: true}
}

func replyRecord(cmd schemas.Envelope, reply schemas.Reply) (*kgo.Record, error) {
	env, err := schemas.New(schemas.TypeReply, cmd.ReplyTo, cmd.ActorUserID, reply, time.Now())
	if err != nil {
		return nil, err
	}
	env.CorrelationID = cmd.CorrelationID
	return topics.Record(topics.GatewayReplies, env)
}

func failedReply(c Command) []*kgo.Record {
	if c.Env.ReplyTo == "" {
		return nil
	}
	rec, err := replyRecord(c.Env, schemas.Reply{CommandID: c.Env.ID, Status: 500,
		Body: schemas.ErrorJSON(schemas.CodeInternal, "the command could not be applied; it was parked for an operator", nil)})
	if err != nil {
		return nil
	}
	return []*kgo.Record{rec}
}

func dlqRecord(rec *kgo.Record, cause error) *kgo.Record {
	headers := append([]kgo.RecordHeader{}, rec.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: topics.HeaderDLQError, Value: []byte(cause.Error())},
		kgo.RecordHeader{Key: topics.HeaderDLQSource, Value: []byte(fmt.Sprintf("%s/%d/%d", rec.Topic, rec.Partition, rec.Offset))})
	return &kgo.Record{Topic: topics.DLQ(rec.Topic), Key: rec.Key, Value: rec.Value, Headers: headers}
}

func dlqEnvelope(c Command, cause error) *kgo.Record {
	rec, err := topics.Record(c.Topic, c.Env)
	if err != nil {
		rec = &kgo.Record{Topic: c.Topic}
	}
	rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: topics.HeaderDLQError, Value: []byte(cause.Error())})
	rec.Topic = topics.DLQ(c.Topic)
	return rec
}

// produceUntilDone publishes DLQ records, retrying until the broker has them:
// the offsets of a parked record are committed only after it is on the DLQ.
func (r *Runner) produceUntilDone(ctx, stop context.Context, recs []*kgo.Record) error {
	if len(recs) == 0 {
		return nil
	}
	for {
		err := r.client.ProduceSync(ctx, recs...).FirstErr()
		if err == nil {
			return nil
		}
		r.log.Warn("parking on DLQ failed, retrying", "err", err)
		select {
		case <-stop.Done():
			return fmt.Errorf("shutdown while parking records: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// ErrPanicked marks a handler panic: not retriable, so the batch is split
// and the command that panics on its own is parked on the DLQ while the
// rest of its batch is applied.
var ErrPanicked = errors.New("handler panicked")

// applySafely runs the handler, turning a panic into an error so that one
// bad command cannot stop the consumer group.
func (r *Runner) applySafely(ctx context.Context, tx pgx.Tx, cmds []Command) (out []Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("handler panicked", "group", r.cfg.Group, "commands", len(cmds), "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("%w: %v", ErrPanicked, p)
		}
	}()
	return r.handler.Apply(ctx, tx, cmds)
}
