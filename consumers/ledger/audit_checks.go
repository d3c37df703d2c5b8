package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/storage/audit"
)

// CheckChain names the chain walk among the background audit's checks.
const CheckChain = "ledger chain"

// AuditMetrics are what an alert rule pages on: when the background audit
// last completed, and which of its checks failed then.
type AuditMetrics struct {
	lastRun prometheus.Gauge
	failed  *prometheus.GaugeVec
}

// NewAuditMetrics registers the audit's gauges on reg.
func NewAuditMetrics(reg prometheus.Registerer) *AuditMetrics {
	m := &AuditMetrics{
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_audit_last_run_timestamp_seconds",
			Help: "Unix time the background audit last completed (a stale value: the audit cannot run).",
		}),
		failed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_audit_failed_checks",
			Help: "Checks that failed in the background audit's last run (1 per failed check, 0 per passed or skipped one).",
		}, []string{"check"}),
	}
	reg.MustRegister(m.lastRun, m.failed)
	return m
}

// AuditDB is where the audit reads and records its run.
type AuditDB interface {
	CheckDB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// auditChecks is the cheap part of `platform verify` that the background
// audit runs after its chain walk: the ledger against the modules that emit
// its entries. (The event log against the topics reads the topics whole and
// is left to `platform verify`.)
type auditChecks struct {
	cross   *CrossCheck
	db      AuditDB
	metrics *AuditMetrics
}

// WithChecks makes every audit also run cross against db, record the run
// for the console (storage/audit) and set m. It returns a.
func (a *Auditor) WithChecks(cross *CrossCheck, db AuditDB, m *AuditMetrics) *Auditor {
	a.checks = &auditChecks{cross: cross, db: db, metrics: m}
	return a
}

// record runs the checks after the chain walk's result and records the run
// as of at.
func (c *auditChecks) record(ctx context.Context, chain audit.Result, at time.Time) error {
	run := audit.Run{At: at}
	run.Results = append([]audit.Result{chain}, c.cross.Run(ctx, c.db)...)
	if err := audit.Save(ctx, c.db, run); err != nil {
		return fmt.Errorf("record the audit: %w", err)
	}
	for _, r := range run.Results {
		v := 0.0
		if r.Status == audit.Failed {
			v = 1
		}
		c.metrics.failed.WithLabelValues(r.Check).Set(v)
	}
	c.metrics.lastRun.Set(float64(run.At.UnixNano()) / 1e9)
	return nil
}
