package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/audit"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// Verifier walks the chain.
type Verifier interface {
	Verify(ctx context.Context) (ledger.VerifyResult, error)
}

// Auditor verifies the chain every interval and emits ledger.chain_verified
// through the outbox; with WithChecks it also checks the ledger against the
// modules, records the run and sets the audit's metrics.
type Auditor struct {
	verifier Verifier
	db       postgres.Querier
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger
	checks   *auditChecks
}

// NewAuditor builds the periodic audit.
func NewAuditor(verifier Verifier, db postgres.Querier, interval time.Duration, now func() time.Time, log *slog.Logger) *Auditor {
	return &Auditor{verifier: verifier, db: db, interval: interval, now: now, log: log.With("component", "ledger-audit")}
}

// Run audits until ctx is cancelled; a failed audit is logged and retried
// at the next tick.
func (a *Auditor) Run(ctx context.Context) error {
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := a.AuditOnce(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("ledger audit failed", "err", err)
			}
		}
	}
}

// AuditOnce verifies the chain and queues the ledger.chain_verified event.
func (a *Auditor) AuditOnce(ctx context.Context) error {
	res, err := a.verifier.Verify(ctx)
	if err != nil {
		return err
	}
	if !res.Valid {
		a.log.Error("ledger chain is broken", "brokenAt", *res.BrokenAt, "reason", res.Reason)
	}
	env, err := schemas.New(schemas.TypeLedgerChainVerified, "chain", "", schemas.LedgerChainVerified{
		Valid: res.Valid, Height: res.Height, HeadHash: res.HeadHash, BrokenAt: res.BrokenAt,
		MsToVerify: res.MsToVerify, VerifiedAt: res.VerifiedAt}, a.now())
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsLedger, env)
	if err != nil {
		return err
	}
	if err := pipeline.InsertOutbox(ctx, a.db, []pipeline.OutboxRow{row}); err != nil {
		return fmt.Errorf("queue chain_verified: %w", err)
	}
	if a.checks == nil {
		return nil
	}
	chain := audit.Okf(CheckChain, "%d entries, hashes recomputed", res.Height)
	if !res.Valid {
		chain = audit.Failedf(CheckChain, "%s at height %d of %d entries", res.Reason, *res.BrokenAt, res.Height)
	}
	return a.checks.record(ctx, chain, a.now())
}
