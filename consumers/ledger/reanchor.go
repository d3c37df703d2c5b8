package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// Source lists the records of one module that should have a ledger entry
// and have none. Re-anchoring sends them through the appender again; an
// entry that exists meanwhile is deduplicated there on (kind, sourceId).
type Source interface {
	// Name labels the source in reports.
	Name() string
	// Kinds lists the entry kinds the source re-anchors: every kind a module
	// emits is covered by exactly one source (a test in cmd/platform checks
	// it against schemas.ModuleLedgerKinds).
	Kinds() []string
	// Missing calls yield for every record without an entry.
	Missing(ctx context.Context, db postgres.Querier, yield func(schemas.LedgerAppend) error) error
}

// SQLSource is a Source given by a query returning, per record without an
// entry, the columns entry_id, kind, source_id, actor_user_id, amount_cents
// (nullable), currency and meta (JSON text, nullable). The source is skipped
// while Table does not exist (its module is not deployed).
type SQLSource struct {
	Label string
	Table string
	// EntryKinds lists the entry kinds the query can return.
	EntryKinds []string
	Query      string
}

// Name labels the source.
func (s SQLSource) Name() string { return s.Label }

// Kinds lists the entry kinds the source re-anchors.
func (s SQLSource) Kinds() []string { return s.EntryKinds }

// Missing runs the query.
func (s SQLSource) Missing(ctx context.Context, db postgres.Querier, yield func(schemas.LedgerAppend) error) error {
	var exists bool
	if err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, s.Table).Scan(&exists); err != nil {
		return fmt.Errorf("check table %s: %w", s.Table, err)
	}
	if !exists {
		return nil
	}
	rows, err := db.Query(ctx, s.Query)
	if err != nil {
		return fmt.Errorf("list %s records without an entry: %w", s.Label, err)
	}
	// Read everything first: yield writes to the same connection.
	var found []schemas.LedgerAppend
	for rows.Next() {
		var a schemas.LedgerAppend
		var amount *int64
		var meta *string
		if err := rows.Scan(&a.EntryID, &a.Kind, &a.SourceID, &a.ActorUserID, &amount, &a.Currency, &meta); err != nil {
			rows.Close()
			return fmt.Errorf("scan %s record: %w", s.Label, err)
		}
		a.AmountCents = amount
		if meta != nil {
			a.Meta = map[string]any{}
			if err := json.Unmarshal([]byte(*meta), &a.Meta); err != nil {
				a.Meta = nil
			}
		}
		found = append(found, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list %s records without an entry: %w", s.Label, err)
	}
	for _, a := range found {
		if err := yield(a); err != nil {
			return err
		}
	}
	return nil
}

// Reanchor queues a ledger.append record, through the outbox (so the relay
// publishes it to the one appender), for every record of sources that has
// no entry. It never writes the chain table. With dryRun it only counts.
// It returns how many records each source had missing.
func Reanchor(ctx context.Context, db postgres.Querier, sources []Source, now func() time.Time, dryRun bool) (map[string]int, error) {
	counts := map[string]int{}
	for _, src := range sources {
		var rows []pipeline.OutboxRow
		flush := func() error {
			if dryRun || len(rows) == 0 {
				rows = rows[:0]
				return nil
			}
			if err := pipeline.InsertOutbox(ctx, db, rows); err != nil {
				return fmt.Errorf("queue re-anchored entries of %s: %w", src.Name(), err)
			}
			rows = rows[:0]
			return nil
		}
		err := src.Missing(ctx, db, func(a schemas.LedgerAppend) error {
			counts[src.Name()]++
			env, err := schemas.New(schemas.TypeLedgerAppend, "", a.ActorUserID, a, now())
			if err != nil {
				return err
			}
			row, err := pipeline.EventRow(topics.LedgerAppend, env)
			if err != nil {
				return err
			}
			rows = append(rows, row)
			if len(rows) >= 1000 {
				return flush()
			}
			return nil
		})
		if err != nil {
			return counts, err
		}
		if err := flush(); err != nil {
			return counts, err
		}
	}
	return counts, nil
}
