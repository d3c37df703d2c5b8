package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// DB is a pool: it queries and opens transactions.
type DB interface {
	postgres.Querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

// LogPartition is one partition of event_log: seqs in [From, To).
type LogPartition struct {
	Name     string
	From, To int64 // From is math.MinInt64 for MINVALUE
}

var boundRE = regexp.MustCompile(`FROM \(([^)]*)\) TO \(([^)]*)\)`)

// LogPartitions lists the partitions of event_log by range.
func LogPartitions(ctx context.Context, q postgres.Querier) ([]LogPartition, error) {
	rows, err := q.Query(ctx, `
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid)
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'event_log'::regclass`)
	if err != nil {
		return nil, fmt.Errorf("list event log partitions: %w", err)
	}
	defer rows.Close()
	var out []LogPartition
	for rows.Next() {
		var name, bound string
		if err := rows.Scan(&name, &bound); err != nil {
			return nil, err
		}
		m := boundRE.FindStringSubmatch(bound)
		if m == nil {
			return nil, fmt.Errorf("event log partition %s: unexpected bound %q", name, bound)
		}
		from, err := parseBound(m[1])
		if err != nil {
			return nil, fmt.Errorf("event log partition %s: %w", name, err)
		}
		to, err := parseBound(m[2])
		if err != nil {
			return nil, fmt.Errorf("event log partition %s: %w", name, err)
		}
		out = append(out, LogPartition{Name: name, From: from, To: to})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out, nil
}

func parseBound(s string) (int64, error) {
	if s == "MINVALUE" {
		return -1 << 63, nil
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		s = s[1 : len(s)-1]
	}
	return strconv.ParseInt(s, 10, 64)
}

// LogMaintenance says how MaintainLog keeps the partitions.
type LogMaintenance struct {
	// Width is the number of seqs of a new partition.
	Width int64
	// Ahead is how many partitions of Width must exist beyond the last seq
	// handed out.
	Ahead int
	// Cursor is the relay's published position: only partitions entirely at
	// or below it are dropped.
	Cursor int64
	// Before: a partition is dropped only when its newest row is older.
	Before time.Time
}

// MaintainLog creates the partitions the next seqs need and drops the ones
// entirely published (behind m.Cursor) whose newest row is older than
// m.Before. Each DDL runs in its own short transaction that gives up rather
// than queue behind writers for long. It returns what it created and dropped.
func MaintainLog(ctx context.Context, db DB, m LogMaintenance) (created, dropped []string, err error) {
	if m.Width <= 0 || m.Ahead <= 0 {
		return nil, nil, fmt.Errorf("event log maintenance: width %d and ahead %d must be positive", m.Width, m.Ahead)
	}
	parts, err := LogPartitions(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	last, err := lastSeq(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	top := int64(1)
	for _, p := range parts {
		top = max(top, p.To)
	}
	for top <= last+int64(m.Ahead)*m.Width {
		name := fmt.Sprintf("event_log_p%d", top)
		if err := ddl(ctx, db, fmt.Sprintf(`CREATE TABLE %s PARTITION OF event_log FOR VALUES FROM (%d) TO (%d)`,
			pgx.Identifier{name}.Sanitize(), top, top+m.Width)); err != nil {
			return created, dropped, fmt.Errorf("create event log partition %s: %w", name, err)
		}
		created = append(created, name)
		top += m.Width
	}
	for _, p := range parts {
		if p.To > m.Cursor+1 {
			continue
		}
		var newest *time.Time
		err = db.QueryRow(ctx, fmt.Sprintf(`SELECT max(created_at) FROM (SELECT created_at FROM %s ORDER BY seq DESC LIMIT 1) t`,
			pgx.Identifier{p.Name}.Sanitize())).Scan(&newest)
		if err != nil {
			return created, dropped, fmt.Errorf("read newest row of %s: %w", p.Name, err)
		}
		if newest != nil && !newest.Before(m.Before) {
			continue
		}
		if err := ddl(ctx, db, `DROP TABLE `+pgx.Identifier{p.Name}.Sanitize()); err != nil {
			return created, dropped, fmt.Errorf("drop event log partition %s: %w", p.Name, err)
		}
		dropped = append(dropped, p.Name)
	}
	return created, dropped, nil
}

func lastSeq(ctx context.Context, db postgres.Querier) (int64, error) {
	var last int64
	if err := db.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM event_log_seq`).Scan(&last); err != nil {
		return 0, fmt.Errorf("read event log sequence: %w", err)
	}
	return last, nil
}

func ddl(ctx context.Context, db DB, sql string) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '2s'`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
