package main

// The series the alert rules of deploy/prometheus/alerts.yml need that no
// module exports by itself: the file system under DATA_DIR, the broker's
// fsync latency, the consumer groups as the broker sees them, Postgres's
// WAL archiver, the newest pgBackRest backup and reconciliation drift.
// deploy/prometheus/RUNBOOK.md says which process exports each.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	gfiat "github.com/fintech/platform/gateway/fiat"
	"github.com/fintech/platform/schemas"
	sfiat "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// collectTimeout bounds what one scrape waits for Postgres, the broker or
// pgBackRest: a series that could not be read is left out of that scrape.
// It stays well under the shortest scrape timeout we configure (5 s, the
// local cluster's interval): a scrape that outlived Prometheus's timeout
// would count as the process being down (up 0, GatewayInstanceDown) when
// only its database or broker is slow to answer.
const collectTimeout = 2 * time.Second

// registerDataDirMetrics exports the free and total bytes of the file system
// holding dir (DiskFilling, DiskAlmostFull).
func registerDataDirMetrics(reg prometheus.Registerer, dir string) {
	statfs := func(f func(st *syscall.Statfs_t) float64) func() float64 {
		return func() float64 {
			var st syscall.Statfs_t
			if err := syscall.Statfs(dir, &st); err != nil {
				return 0
			}
			return f(&st)
		}
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "platform_data_dir_avail_bytes", Help: "Bytes available to unprivileged writers on the file system holding DATA_DIR.",
		}, statfs(func(st *syscall.Statfs_t) float64 { return float64(st.Bavail) * float64(st.Bsize) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "platform_data_dir_size_bytes", Help: "Size in bytes of the file system holding DATA_DIR.",
		}, statfs(func(st *syscall.Statfs_t) float64 { return float64(st.Blocks) * float64(st.Bsize) })),
	)
}

// newFsyncHistogram is the embedded broker's fsync latency (BrokerFsyncSlow),
// fed by broker.WithFsyncObserver.
func newFsyncHistogram() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "platform_broker_fsync_seconds", Help: "Duration of the embedded broker's fsyncs (group commit).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
	})
}

// groupCollector reports every platform consumer group as the broker sees
// it, whether or not its processes run: members and committed lag by topic
// (ConsumerGroupWithoutMembers, ConsumerLagGrowing). A group the broker does
// not know (never started in this deployment) has no series.
type groupCollector struct {
	adm     *kadm.Client
	groups  []string
	members *prometheus.Desc
	lag     *prometheus.Desc
	log     *slog.Logger
}

func newGroupCollector(cl *kgo.Client, groups []string, log *slog.Logger) *groupCollector {
	return &groupCollector{adm: kadm.NewClient(cl), groups: groups, log: log,
		members: prometheus.NewDesc("platform_consumer_group_members",
			"Members of a platform consumer group, as its coordinator (the broker) reports them.", []string{"group"}, nil),
		lag: prometheus.NewDesc("platform_consumer_group_lag",
			"Records of a topic past a consumer group's committed offsets (the broker's view).", []string{"group", "topic"}, nil),
	}
}

func (c *groupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.lag
}

func (c *groupCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	lags, err := c.adm.Lag(ctx, c.groups...)
	if err != nil {
		c.log.Debug("describing consumer groups for metrics", "err", err)
		return
	}
	lags.Each(func(l kadm.DescribedGroupLag) {
		if l.DescribeErr != nil || l.State == "Dead" || l.State == "" {
			return
		}
		ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(len(l.Members)), l.Group)
		if l.FetchErr != nil {
			return
		}
		for topic, t := range l.Lag.TotalByTopic() {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(t.Lag), l.Group, topic)
		}
	})
}

// archiverCollector reads pg_stat_archiver on the primary at scrape time
// (WALArchiveFailing, WALArchiveLagging).
type archiverCollector struct {
	pool                                *pgxpool.Pool
	archived, failed, failures, pending *prometheus.Desc
}

func newArchiverCollector(pool *pgxpool.Pool) *archiverCollector {
	return &archiverCollector{pool: pool,
		archived: prometheus.NewDesc("platform_pg_wal_archive_last_archived_timestamp_seconds",
			"When Postgres last archived a WAL file (pg_stat_archiver; 0: never).", nil, nil),
		failed: prometheus.NewDesc("platform_pg_wal_archive_last_failed_timestamp_seconds",
			"When an archive_command attempt last failed (pg_stat_archiver; 0: never).", nil, nil),
		failures: prometheus.NewDesc("platform_pg_wal_archive_failed_total",
			"Failed archive_command attempts since the statistics were reset (pg_stat_archiver).", nil, nil),
		pending: prometheus.NewDesc("platform_pg_wal_archive_pending_segments",
			"Completed WAL segments newer than the last archived one: written but not yet archived.", nil, nil),
	}
}

func (c *archiverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.archived
	ch <- c.failed
	ch <- c.failures
	ch <- c.pending
}

func (c *archiverCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	st, err := postgres.Archiver(ctx, c.pool)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.archived, prometheus.GaugeValue, st.LastArchivedAt)
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.GaugeValue, st.LastFailedAt)
	ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(st.FailedCount))
	if n, ok := pendingSegments(st.LastArchivedWAL, st.CurrentWAL, st.SegmentSize); ok {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(n))
	}
}

// walSegment is the number of the WAL segment a file name (TTTTTTTTLLLLLLLLSSSSSSSS,
// perhaps with a .partial or .backup suffix) names, with segSize-byte
// segments; ok is false for other names (a timeline's .history file).
func walSegment(name string, segSize int64) (uint64, bool) {
	if len(name) < 24 || segSize <= 0 {
		return 0, false
	}
	log, err1 := strconv.ParseUint(name[8:16], 16, 32)
	seg, err2 := strconv.ParseUint(name[16:24], 16, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return log*(0x100000000/uint64(segSize)) + seg, true
}

// pendingSegments is how many completed segments come after the last
// archived one: the segment being written (current) is not complete yet.
// With nothing archived yet every completed segment is pending. ok is false
// when it cannot be told (a standby, an unreadable name).
func pendingSegments(lastArchived, current string, segSize int64) (uint64, bool) {
	cur, ok := walSegment(current, segSize)
	if !ok {
		return 0, false
	}
	if lastArchived == "" {
		return cur, true
	}
	last, ok := walSegment(lastArchived, segSize)
	if !ok {
		return 0, false
	}
	if cur <= last+1 {
		return 0, true
	}
	return cur - last - 1, true
}

// backupCollector reports the newest completed pgBackRest backup of each
// type (BackupMissing), from `pgbackrest info --output=json` with the
// environment's PGBACKREST_STANZA and PGBACKREST_CONFIG, run at most once a
// minute.
type backupCollector struct {
	run  func(ctx context.Context) ([]byte, error)
	now  func() time.Time
	last *prometheus.Desc
	log  *slog.Logger

	mu      sync.Mutex
	readAt  time.Time
	newest  map[string]float64
	readErr error
}

// backupInfoEvery bounds how often the collector runs pgbackrest info.
const backupInfoEvery = time.Minute

func newBackupCollector(run func(ctx context.Context) ([]byte, error), now func() time.Time, log *slog.Logger) *backupCollector {
	return &backupCollector{run: run, now: now, log: log,
		last: prometheus.NewDesc("platform_backup_last_completed_timestamp_seconds",
			"When the newest complete pgBackRest backup of each type stopped (pgbackrest info).", []string{"type"}, nil)}
}

// pgbackrestInfo runs `pgbackrest info --output=json`.
func pgbackrestInfo(ctx context.Context) ([]byte, error) {
	out, err := exec.CommandContext(ctx, "pgbackrest", "info", "--output=json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("pgbackrest info: %w: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("pgbackrest info: %w", err)
	}
	return out, nil
}

func (c *backupCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.last }

func (c *backupCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readAt.IsZero() || c.now().Sub(c.readAt) >= backupInfoEvery {
		ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
		out, err := c.run(ctx)
		cancel()
		if err == nil {
			c.newest, err = newestBackups(out)
		}
		if err != nil && (c.readErr == nil || c.readErr.Error() != err.Error()) {
			c.log.Warn("reading the backups for metrics", "err", err)
		}
		c.readAt, c.readErr = c.now(), err
	}
	if c.readErr != nil {
		return
	}
	for typ, at := range c.newest {
		ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, at, typ)
	}
}

// newestBackups reads pgbackrest info's JSON: the stop time of the newest
// backup of each type (full, diff, incr) over the stanzas listed, skipping
// backups that ended in error.
func newestBackups(info []byte) (map[string]float64, error) {
	var stanzas []struct {
		Name   string `json:"name"`
		Backup []struct {
			Type      string `json:"type"`
			Error     *bool  `json:"error"`
			Timestamp struct {
				Stop int64 `json:"stop"`
			} `json:"timestamp"`
		} `json:"backup"`
	}
	if err := json.Unmarshal(info, &stanzas); err != nil {
		return nil, fmt.Errorf("pgbackrest info: %w", err)
	}
	out := map[string]float64{}
	for _, s := range stanzas {
		for _, b := range s.Backup {
			if b.Error != nil && *b.Error || b.Timestamp.Stop == 0 {
				continue
			}
			if at := float64(b.Timestamp.Stop); at > out[b.Type] {
				out[b.Type] = at
			}
		}
	}
	return out, nil
}

// reconcileGauge is the drift the last reconciliation from Postgres found,
// by currency and kind (ReconcileDrift): kind balances is the books minus
// the wallets, kind processor the processor's credited total minus the
// ledger's deposits.
type reconcileGauge struct {
	drift *prometheus.GaugeVec
}

func newReconcileGauge(reg prometheus.Registerer) (*reconcileGauge, error) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "platform_reconcile_drift_minor", Help: "Drift the last reconciliation from Postgres found, in minor units, by currency and kind (balances, processor).",
	}, []string{"currency", "kind"})
	if err := reg.Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		g = are.ExistingCollector.(*prometheus.GaugeVec)
	}
	return &reconcileGauge{drift: g}, nil
}

// set records one reconciliation's lines.
func (g *reconcileGauge) set(lines []schemas.FiatCurrencyReconcile) {
	for _, l := range lines {
		g.drift.WithLabelValues(l.Currency, "balances").Set(float64(l.Drift))
		g.drift.WithLabelValues(l.Currency, "processor").Set(float64(l.ProcessorDrift))
	}
}

// reconcileInterval is how often the fiat applier's process reconciles the
// books in the background: one read-only statement aggregating
// fiat_transactions and fiat_wallets.
const reconcileInterval = 5 * time.Minute

// reconciler is the background loop that reconciles the books from
// Postgres every interval, whether or not an admin asks, so that drift
// alerts without anyone looking.
type reconciler struct {
	books    func(ctx context.Context) ([]sfiat.Books, error)
	gauge    *reconcileGauge
	interval time.Duration
	log      *slog.Logger
}

func (r *reconciler) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := r.once(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("background reconciliation", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (r *reconciler) once(ctx context.Context) error {
	books, err := r.books(ctx)
	if err != nil {
		return err
	}
	lines := make([]schemas.FiatCurrencyReconcile, 0, len(books))
	for _, b := range books {
		lines = append(lines, gfiat.Reconcile(b))
	}
	r.gauge.set(lines)
	return nil
}

// registerGatewayOpsMetrics adds to a gateway's registry the collectors
// that read shared state at scrape time: the consumer groups (from the
// broker), the WAL archiver (from Postgres) and, with PGBACKREST_STANZA
// set, the newest backups.
func (a *app) registerGatewayOpsMetrics(stanza string) error {
	cl, err := topics.NewClient(a.brokers)
	if err != nil {
		return fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	a.closers = append(a.closers, cl.Close)
	a.reg.MustRegister(newGroupCollector(cl, topics.Groups(), a.log), newArchiverCollector(a.pool))
	if stanza != "" {
		a.reg.MustRegister(newBackupCollector(pgbackrestInfo, a.now, a.log))
	}
	return nil
}
