// Package audit keeps the outcome of the platform's consistency checks: the
// statuses a check reports (shared by `platform verify` and the background
// audit) and the last background run, which the admin console shows.
package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Status is what a check concluded.
type Status string

// The statuses, as printed.
const (
	// OK: the check ran over everything it names and found nothing wrong.
	OK Status = "ok"
	// Failed: the check found an inconsistency.
	Failed Status = "FAILED"
	// Skipped: the check could not run, or not over everything (a secret or
	// the broker missing); its detail says why. Never counted as ok.
	Skipped Status = "SKIPPED"
)

// Result is one check's line.
type Result struct {
	Check  string
	Status Status
	Detail string
}

// Okf, Failedf and Skippedf build a Result.
func Okf(check, format string, args ...any) Result {
	return Result{check, OK, fmt.Sprintf(format, args...)}
}

// Failedf builds a failed Result.
func Failedf(check, format string, args ...any) Result {
	return Result{check, Failed, fmt.Sprintf(format, args...)}
}

// Skippedf builds a skipped Result.
func Skippedf(check, format string, args ...any) Result {
	return Result{check, Skipped, fmt.Sprintf(format, args...)}
}

// Run is the outcome of one audit: when it ran and its checks.
type Run struct {
	At      time.Time
	Results []Result
}

// Failed lists the checks of the run that failed.
func (r Run) Failed() []Result {
	var out []Result
	for _, c := range r.Results {
		if c.Status == Failed {
			out = append(out, c)
		}
	}
	return out
}

// Beginner starts a transaction (a pool or a connection).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Save replaces the stored run with r, in one transaction: its checks are
// upserted (two processes auditing at once do not conflict) and the checks
// it did not run are removed.
func Save(ctx context.Context, db Beginner, r Run) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		names := make([]string, 0, len(r.Results))
		for _, c := range r.Results {
			names = append(names, c.Check)
			if _, err := tx.Exec(ctx, `
INSERT INTO audit_checks (name, status, detail, ran_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE SET status = EXCLUDED.status, detail = EXCLUDED.detail, ran_at = EXCLUDED.ran_at`,
				c.Check, string(c.Status), c.Detail, r.At); err != nil {
				return fmt.Errorf("record audit check %s: %w", c.Check, err)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM audit_checks WHERE NOT name = ANY($1)`, names); err != nil {
			return fmt.Errorf("clear the checks the last audit did not run: %w", err)
		}
		return nil
	})
}

// Store reads the last stored run.
type Store struct{ db postgres.Querier }

// NewStore builds a Store.
func NewStore(db postgres.Querier) *Store { return &Store{db: db} }

// Latest returns the last stored run; ok is false when none was stored.
func (s *Store) Latest(ctx context.Context) (r Run, ok bool, err error) {
	rows, err := s.db.Query(ctx, `SELECT name, status, detail, ran_at FROM audit_checks ORDER BY name`)
	if err != nil {
		return Run{}, false, fmt.Errorf("read the last audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Result
		var at time.Time
		if err := rows.Scan(&c.Check, &c.Status, &c.Detail, &at); err != nil {
			return Run{}, false, fmt.Errorf("scan audit check: %w", err)
		}
		r.Results, r.At, ok = append(r.Results, c), at, true
	}
	if err := rows.Err(); err != nil {
		return Run{}, false, fmt.Errorf("read the last audit: %w", err)
	}
	return r, ok, nil
}
