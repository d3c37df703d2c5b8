package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/audit"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// Names of the cross-module checks, as verify prints them and as the
// background audit labels its metric.
const (
	CheckSourcesAnchored = "ledger entry per source"
	CheckEntriesSourced  = "source per ledger entry"
)

// AppendLog reads the ledger.append topic: where its partition starts and
// ends, and its records.
type AppendLog interface {
	Spans(ctx context.Context, topics ...string) ([]topics.Span, error)
	Read(ctx context.Context, s topics.Span, from int64, limit int) ([]*kgo.Record, error)
}

var _ AppendLog = (*topics.Ops)(nil)

// CheckDB is what the checks read: single statements, and the read-only
// snapshot they run in (a pool).
type CheckDB interface {
	postgres.Querier
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// tabled is a Source whose records are the rows of one table, keyed by id.
type tabled interface {
	Source
	RecordTable() string
}

// RecordTable is the table whose ids the source's entries name.
func (s SQLSource) RecordTable() string { return s.Table }

// CrossCheck checks the ledger against the modules that emit its entries:
// every record that should have an entry has exactly one, and every module
// entry names a record that exists.
//
// Appends are asynchronous (source row and outbox row in one transaction →
// relay → ledger.append → appender), so a record without an entry is only
// missing once its append is known to have been applied. The horizon, read
// in this order:
//
//  1. C, the relay's cursor: every event-log row with seq <= C is on its
//     topic, and no row <= C commits later.
//  2. E, the end of ledger.append, read after C: every append of a row <= C
//     is at an offset below E.
//  3. P, the appender's stored position: it commits an entry together with
//     the position past its append, so every append below P has its entry
//     (or was refused) in any later snapshot.
//  4. One snapshot: the records without an entry, and the appends of the
//     event-log rows above C (a record and its row commit together, so the
//     snapshot that sees the record sees its row).
//  5. The appends at offsets [P, E) of ledger.append.
//
// A record without an entry whose append is in 4 or 5 is in flight; any other
// one is missing, whatever the load, with no clock or grace period involved.
// Without the broker, records without an entry that are not in 4 cannot be
// told apart and the check says SKIPPED.
type CrossCheck struct {
	sources []Source
	appends AppendLog
	// maxBacklog bounds how many ledger.append records one run reads.
	maxBacklog int64
}

// NewCrossCheck builds the check over sources; appends is nil without a
// broker. A run reads at most maxBacklog records of ledger.append (0: no
// bound).
func NewCrossCheck(sources []Source, appends AppendLog, maxBacklog int64) *CrossCheck {
	return &CrossCheck{sources: sources, appends: appends, maxBacklog: maxBacklog}
}

// examples is how many ids a failed line names.
const examples = 5

type sourceKey struct{ kind, id string }

// Run returns the lines of CheckSourcesAnchored and CheckEntriesSourced.
func (c *CrossCheck) Run(ctx context.Context, db CheckDB) []audit.Result {
	anchored, sourced := c.run(ctx, db)
	return []audit.Result{anchored, sourced}
}

func (c *CrossCheck) run(ctx context.Context, db CheckDB) (audit.Result, audit.Result) {
	fail := func(err error) (audit.Result, audit.Result) {
		return audit.Failedf(CheckSourcesAnchored, "%v", err), audit.Failedf(CheckEntriesSourced, "%v", err)
	}
	cursor, err := pipeline.LogCursor(ctx, db)
	if err != nil {
		return fail(err)
	}
	var span *topics.Span
	var spanErr error
	if c.appends != nil {
		span, spanErr = appendSpan(ctx, c.appends)
	}
	positions, err := pipeline.LoadPositions(ctx, db, topics.GroupLedger)
	if err != nil {
		return fail(err)
	}
	applied := positions[topics.LedgerAppend][0]

	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fail(fmt.Errorf("begin the audit snapshot: %w", err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	var missing []sourceKey
	for _, src := range c.sources {
		if err := src.Missing(ctx, tx, func(a schemas.LedgerAppend) error {
			missing = append(missing, sourceKey{a.Kind, a.SourceID})
			return nil
		}); err != nil {
			return fail(err)
		}
	}
	sourced := c.entriesSourced(ctx, tx)
	dups, dupCount, err := c.duplicates(ctx, tx)
	if err != nil {
		return fail(err)
	}
	candidates := len(missing)
	inFlight := map[sourceKey]bool{}
	if len(missing) > 0 {
		if err := unpublishedAppends(ctx, tx, cursor, inFlight); err != nil {
			return fail(err)
		}
	}
	missing = without(missing, inFlight)
	if len(missing) > 0 {
		switch {
		case c.appends == nil:
			return audit.Skippedf(CheckSourcesAnchored, "%d records without an entry (e.g. %s) not above the relay cursor %d: no broker to read ledger.append from the appender's position",
				len(missing), keyList(missing), cursor), sourced
		case spanErr != nil:
			return audit.Skippedf(CheckSourcesAnchored, "%d records without an entry (e.g. %s): ledger.append not readable: %v",
				len(missing), keyList(missing), spanErr), sourced
		}
		from := max(applied, span.Start)
		if c.maxBacklog > 0 && span.End-from > c.maxBacklog {
			return audit.Skippedf(CheckSourcesAnchored, "%d records without an entry: the appender is %d records behind on ledger.append (more than %d to read)",
				len(missing), span.End-from, c.maxBacklog), sourced
		}
		if err := readAppends(ctx, c.appends, *span, from, inFlight); err != nil {
			return audit.Skippedf(CheckSourcesAnchored, "%d records without an entry: reading ledger.append: %v", len(missing), err), sourced
		}
		missing = without(missing, inFlight)
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%d records have no entry though their append is behind the horizon (relay cursor %d, appender at %d): %s",
			len(missing), cursor, applied, keyList(missing)))
	}
	if dupCount > 0 {
		problems = append(problems, fmt.Sprintf("%d records are named by more than one entry: %s", dupCount, strings.Join(dups, ", ")))
	}
	if len(problems) > 0 {
		return audit.Failedf(CheckSourcesAnchored, "%s", strings.Join(problems, "; ")), sourced
	}
	return audit.Okf(CheckSourcesAnchored, "every record of %s has one entry, or its append is in flight (%d; relay cursor %d, appender at %d)",
		sourceNames(c.sources), candidates-len(missing), cursor, applied), sourced
}

// entriesSourced finds module entries whose record does not exist. An entry
// is appended only after its record committed, so one snapshot suffices.
func (c *CrossCheck) entriesSourced(ctx context.Context, tx pgx.Tx) audit.Result {
	var orphans []string
	total, checked := 0, 0
	for _, src := range c.sources {
		t, ok := src.(tabled)
		if !ok {
			continue
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t.RecordTable()).Scan(&exists); err != nil {
			return audit.Failedf(CheckEntriesSourced, "check table %s: %v", t.RecordTable(), err)
		}
		if !exists {
			continue
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE scope = '' AND kind = ANY($1)`, src.Kinds()).Scan(&n); err != nil {
			return audit.Failedf(CheckEntriesSourced, "count %s entries: %v", src.Name(), err)
		}
		checked += n
		rows, err := tx.Query(ctx, `
SELECT e.kind, e.source_id, count(*) OVER ()
FROM ledger_entries e
WHERE e.scope = '' AND e.kind = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM `+pgx.Identifier{t.RecordTable()}.Sanitize()+` s WHERE s.id = e.source_id)
ORDER BY e.height LIMIT $2`, src.Kinds(), examples)
		if err != nil {
			return audit.Failedf(CheckEntriesSourced, "list %s entries without a record: %v", src.Name(), err)
		}
		for first := true; rows.Next(); first = false {
			var kind, id string
			var all int
			if err := rows.Scan(&kind, &id, &all); err != nil {
				rows.Close()
				return audit.Failedf(CheckEntriesSourced, "scan %s entry: %v", src.Name(), err)
			}
			if first {
				total += all
			}
			if len(orphans) < examples {
				orphans = append(orphans, kind+" "+id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return audit.Failedf(CheckEntriesSourced, "list %s entries without a record: %v", src.Name(), err)
		}
	}
	if total > 0 {
		return audit.Failedf(CheckEntriesSourced, "%d of %d module entries name a record that does not exist: %s",
			total, checked, strings.Join(orphans, ", "))
	}
	return audit.Okf(CheckEntriesSourced, "%d module entries each name a record that exists", checked)
}

// duplicates finds records named by more than one module entry (of any of
// their source's kinds; one kind twice is refused by the unique index).
func (c *CrossCheck) duplicates(ctx context.Context, tx pgx.Tx) ([]string, int, error) {
	var out []string
	total := 0
	for _, src := range c.sources {
		rows, err := tx.Query(ctx, `
SELECT source_id, count(*) OVER () FROM ledger_entries
WHERE scope = '' AND kind = ANY($1) GROUP BY source_id HAVING count(*) > 1 ORDER BY source_id LIMIT $2`, src.Kinds(), examples)
		if err != nil {
			return nil, 0, fmt.Errorf("list %s records with several entries: %w", src.Name(), err)
		}
		for first := true; rows.Next(); first = false {
			var id string
			var all int
			if err := rows.Scan(&id, &all); err != nil {
				rows.Close()
				return nil, 0, fmt.Errorf("scan: %w", err)
			}
			if first {
				total += all
			}
			if len(out) < examples {
				out = append(out, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, fmt.Errorf("list %s records with several entries: %w", src.Name(), err)
		}
	}
	return out, total, nil
}

// unpublishedAppends adds the appends of the event-log rows above cursor.
func unpublishedAppends(ctx context.Context, tx pgx.Tx, cursor int64, into map[sourceKey]bool) error {
	rows, err := tx.Query(ctx, `SELECT topics, payloads FROM event_log WHERE seq > $1 AND $2 = ANY(topics)`,
		cursor, topics.LedgerAppend)
	if err != nil {
		return fmt.Errorf("read the unpublished appends: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tps []string
		var payloads [][]byte
		if err := rows.Scan(&tps, &payloads); err != nil {
			return fmt.Errorf("scan event log row: %w", err)
		}
		for i, tp := range tps {
			if tp == topics.LedgerAppend && i < len(payloads) {
				addAppends(payloads[i], into)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the unpublished appends: %w", err)
	}
	return nil
}

// addAppends adds the (kind, source) of the append an encoded envelope
// carries, or of each one a bundle carries. What does not read names no
// source: its record stays without an entry and is reported.
func addAppends(value []byte, into map[sourceKey]bool) {
	env, err := schemas.Read(value)
	if err != nil {
		return
	}
	if env.Type == schemas.TypeEventBundle {
		events, err := schemas.Unbundle(env)
		if err != nil {
			return
		}
		for _, raw := range events {
			addAppends(raw, into)
		}
		return
	}
	if env.Type != schemas.TypeLedgerAppend {
		return
	}
	if a, err := schemas.DataAs[schemas.LedgerAppend](env); err == nil && a.Scope == "" {
		into[sourceKey{a.Kind, a.SourceID}] = true
	}
}

// appendSpan returns the one partition of ledger.append.
func appendSpan(ctx context.Context, log AppendLog) (*topics.Span, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	spans, err := log.Spans(ctx, topics.LedgerAppend)
	if err != nil {
		return nil, err
	}
	for _, s := range spans {
		if s.Partition == 0 {
			return &s, nil
		}
	}
	return nil, errors.New("ledger.append has no partition 0")
}

// readChunk is how many records one read of ledger.append returns.
const readChunk = 5000

// readAppends adds the appends of ledger.append from offset from to the
// end of s.
func readAppends(ctx context.Context, log AppendLog, s topics.Span, from int64, into map[sourceKey]bool) error {
	for from < s.End {
		recs, err := log.Read(ctx, s, from, readChunk)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("no record at offset %d of %d", from, s.End)
		}
		for _, rec := range recs {
			addAppends(rec.Value, into)
			from = rec.Offset + 1
		}
	}
	return nil
}

// without returns the keys not in set.
func without(keys []sourceKey, set map[sourceKey]bool) []sourceKey {
	out := keys[:0]
	for _, k := range keys {
		if !set[k] {
			out = append(out, k)
		}
	}
	return out
}

// keyList names the first few keys.
func keyList(keys []sourceKey) string {
	var b []string
	for i, k := range keys {
		if i == examples {
			b = append(b, "…")
			break
		}
		b = append(b, k.kind+" "+k.id)
	}
	return strings.Join(b, ", ")
}

// sourceNames lists the sources' names, sorted.
func sourceNames(sources []Source) string {
	var names []string
	for _, s := range sources {
		names = append(names, s.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
