package pipeline

// The runner, by job: runner.go configures and joins the group; poll.go
// reads polls and decides when to overlap them (order.go has the rules);
// batch.go splits a poll over the workers and carries one batch from its
// records to its replies; tx.go holds the two transaction shapes (a plain
// Handler's, a Pipelined one's); retry.go retries, splits and parks a batch
// that fails; record.go turns outcomes into processed rows, event log rows
// (bundled where the topic is) and replies; park.go puts what cannot be
// applied on the DLQ; position.go keeps the positions in Postgres;
// journal.go journals each command's outcome on Kafka and loads it for a
// re-application after a restore, which reproduce.go makes reproduce it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
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
	// error that is not momentary (postgres.Momentary: anything but the
	// server, the connection or contention — a data or constraint error, a
	// unique violation, a statement timeout, a handler panic) is tried
	// alone, with backoff, before it is parked on the DLQ with a 500 reply;
	// and how many times a batch failing with one that might pass (a unique
	// violation, a statement timeout) is tried whole before it is split
	// (retry.go). A momentary error is retried for as long as it takes and
	// never parks. Default 3.
	ParkAfter int
	// Tracer starts the span of each batch, in the trace of its first
	// traced command and linked to the others' (default: no spans).
	Tracer trace.Tracer
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
	// arrived meanwhile); otherwise the next poll is read once the batch
	// committed and handed its journal entries to the client, while it
	// waits for their acknowledgement and replies (overlapAfterCommit).
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
	if c.Tracer == nil {
		c.Tracer = noop.NewTracerProvider().Tracer("")
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
	// held are the positions the runner stored or loaded; revalidating
	// asks for a check of them against the stored ones (position.go).
	held         held
	revalidating atomic.Bool
	// lastRecords is when a poll last returned records (gather.go).
	lastRecords time.Time
	// replays are the journal entries of the commands to re-apply; carry
	// the records a batch held back, applied again first; holds names the
	// commands that wait (reproduce.go).
	replays replays
	carryMu sync.Mutex
	carry   []*kgo.Record
	holds   holds
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
	// The DLQ counters start at 0: a series that first appears at 1 shows
	// no increase to Prometheus, and the DLQRecordParked alert
	// (deploy/prometheus/alerts.yml) would miss the first parked record.
	for _, t := range cfg.Topics {
		metrics.DLQ.WithLabelValues(cfg.Group, topics.DLQ(t))
	}
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
		kgo.RecordPartitioner(newJournalPartitioner()),
		kgo.OnPartitionsRevoked(r.forget),
		kgo.OnPartitionsLost(r.forget),
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
