package partner

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// list runs a page query ($1 e-mail, $2 cursor id or "", $3 limit) and the
// matching count ($1 e-mail).
func list[T any](ctx context.Context, s *Store, what, pageSQL, countSQL, email string, before schemas.Position, limit int) ([]T, int64, error) {
	rows, err := s.pool.Query(ctx, pageSQL, email, before.ID, limit, before.At)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[T])
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", what, err)
	}
	var total int64
	if err := s.pool.QueryRow(ctx, countSQL, email).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", what, err)
	}
	return out, total, nil
}

const (
	royaltiesPageSQL = `SELECT ` + royaltyRead + ` FROM partner_royalties
WHERE email = $1 AND ($2 = '' OR (recorded_at, id) < ($4, $2)) ORDER BY recorded_at DESC, id DESC LIMIT $3`
	royaltiesCountSQL = `SELECT count(*) FROM partner_royalties WHERE email = $1`
	prizesPageSQL     = `SELECT ` + prizeRead + ` FROM partner_prizes
WHERE email = $1 AND ($2 = '' OR (recorded_at, id) < ($4, $2)) ORDER BY recorded_at DESC, id DESC LIMIT $3`
	prizesCountSQL = `SELECT count(*) FROM partner_prizes WHERE email = $1`
	certPageSQL    = `SELECT ` + certRead + ` FROM partner_cert_payouts
WHERE email = $1 AND ($2 = '' OR (recorded_at, id) < ($4, $2)) ORDER BY recorded_at DESC, id DESC LIMIT $3`
	certCountSQL = `SELECT count(*) FROM partner_cert_payouts WHERE email = $1`
)

// Royalties returns the royalties of a lower-cased e-mail, newest first
// (received, then id), strictly before the position before (zero for the
// first page), and how many there are in all.
func (s *Store) Royalties(ctx context.Context, email string, before schemas.Position, limit int) ([]RoyaltyRow, int64, error) {
	return list[RoyaltyRow](ctx, s, "royalties", royaltiesPageSQL, royaltiesCountSQL, email, before, limit)
}

// Prizes returns the podium entries of a lower-cased e-mail, like Royalties.
func (s *Store) Prizes(ctx context.Context, email string, before schemas.Position, limit int) ([]PrizeRow, int64, error) {
	return list[PrizeRow](ctx, s, "prizes", prizesPageSQL, prizesCountSQL, email, before, limit)
}

// CertPayouts returns the certification payouts of a lower-cased e-mail,
// like Royalties.
func (s *Store) CertPayouts(ctx context.Context, email string, before schemas.Position, limit int) ([]CertPayoutRow, int64, error) {
	return list[CertPayoutRow](ctx, s, "cert payouts", certPageSQL, certCountSQL, email, before, limit)
}

const upcomingSQL = `SELECT ` + tournamentColumns + ` FROM partner_tournaments
WHERE starts_at > $1 AND entries < capacity ORDER BY starts_at, id LIMIT $2`

// Upcoming returns the tournaments accepting entries: starting after now
// with entries below capacity, soonest first.
func (s *Store) Upcoming(ctx context.Context, now time.Time, limit int) ([]TournamentRow, error) {
	rows, err := s.pool.Query(ctx, upcomingSQL, now, limit)
	if err != nil {
		return nil, fmt.Errorf("list upcoming tournaments: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[TournamentRow])
	if err != nil {
		return nil, fmt.Errorf("list upcoming tournaments: %w", err)
	}
	return out, nil
}

// CertStats counts the certification payouts of one e-mail.
type CertStats struct {
	Artifacts int64 // distinct artifactVersionIds
	Payouts   int64
}

const certStatsSQL = `SELECT count(DISTINCT artifact_version_id), count(*) FROM partner_cert_payouts WHERE email = $1`

// CertStats returns the certification counts of a lower-cased e-mail.
func (s *Store) CertStats(ctx context.Context, email string) (CertStats, error) {
	var st CertStats
	if err := s.pool.QueryRow(ctx, certStatsSQL, email).Scan(&st.Artifacts, &st.Payouts); err != nil {
		return CertStats{}, fmt.Errorf("cert stats: %w", err)
	}
	return st, nil
}

// SourceTotal is what one partner source recorded for an e-mail.
type SourceTotal struct {
	Amount int64
	Count  int64
	Last   *time.Time // time of the newest record; nil when none
}

// Earnings are the totals of the three partner sources for one e-mail.
type Earnings struct {
	Rights, Chess, Cert SourceTotal
}

const earningsSQL = `
SELECT 0, coalesce(sum(amount), 0)::bigint, count(*), max(paid_at) FROM partner_royalties WHERE email = $1
UNION ALL
SELECT 1, coalesce(sum(amount), 0)::bigint, count(*), max(finalized_at) FROM partner_prizes WHERE email = $1
UNION ALL
SELECT 2, coalesce(sum(amount), 0)::bigint, count(*), max(certified_at) FROM partner_cert_payouts WHERE email = $1`

// Earnings returns the rights, chess and cert totals of a lower-cased e-mail.
func (s *Store) Earnings(ctx context.Context, email string) (Earnings, error) {
	rows, err := s.pool.Query(ctx, earningsSQL, email)
	if err != nil {
		return Earnings{}, fmt.Errorf("earnings: %w", err)
	}
	defer rows.Close()
	var e Earnings
	dst := []*SourceTotal{&e.Rights, &e.Chess, &e.Cert}
	for rows.Next() {
		var (
			src int
			t   SourceTotal
		)
		if err := rows.Scan(&src, &t.Amount, &t.Count, &t.Last); err != nil {
			return Earnings{}, fmt.Errorf("earnings: %w", err)
		}
		if src >= 0 && src < len(dst) {
			*dst[src] = t
		}
	}
	if err := rows.Err(); err != nil {
		return Earnings{}, fmt.Errorf("earnings: %w", err)
	}
	return e, nil
}
