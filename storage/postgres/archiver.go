package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ArchiverState is what pg_stat_archiver says about WAL archiving on the
// server the pool reaches (the primary), with the WAL file being written.
type ArchiverState struct {
	// LastArchivedAt and LastFailedAt are Unix seconds, 0 for never.
	LastArchivedAt, LastFailedAt float64
	FailedCount                  int64
	// LastArchivedWAL is the last archived file's name ("" for none);
	// CurrentWAL the file being written ("" on a standby).
	LastArchivedWAL, CurrentWAL string
	// SegmentSize is wal_segment_size in bytes.
	SegmentSize int64
}

const archiverSQL = `
SELECT coalesce(extract(epoch FROM last_archived_time), 0)::float8,
       coalesce(extract(epoch FROM last_failed_time), 0)::float8,
       failed_count,
       coalesce(last_archived_wal, ''),
       CASE WHEN pg_is_in_recovery() THEN '' ELSE pg_walfile_name(pg_current_wal_lsn()) END,
       (SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size')
FROM pg_stat_archiver`

// Archiver reads the archiver's state (the WAL archive alerts of
// deploy/prometheus/alerts.yml).
func Archiver(ctx context.Context, pool *pgxpool.Pool) (ArchiverState, error) {
	var s ArchiverState
	err := pool.QueryRow(ctx, archiverSQL).Scan(&s.LastArchivedAt, &s.LastFailedAt, &s.FailedCount,
		&s.LastArchivedWAL, &s.CurrentWAL, &s.SegmentSize)
	if err != nil {
		return s, fmt.Errorf("pg_stat_archiver: %w", err)
	}
	return s, nil
}
