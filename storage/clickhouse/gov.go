package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// GovStatusCount is how many proposals of one category are in one status,
// with the ballots frozen at close summed over them (0 unless closed).
type GovStatusCount struct {
	Status    string
	Category  string
	Proposals int64
	Ballots   int64
}

// govStatsSQL folds the proposal.* events of events.gov into one row per
// proposal (its latest status: created < opened < passed/rejected) and
// counts them per (status, category). The inner GROUP BY id drops the
// sink's duplicate rows. It runs on ClickHouse 18.16 (visitParamExtract*,
// which reads the top-level fields: the event data lists them before the
// nested tally).
const govStatsSQL = `
SELECT st, cat, toInt64(count()), toInt64(sum(b)) FROM (
  SELECT pid, argMax(st, rk) AS st, any(cat) AS cat, max(b) AS b FROM (
    SELECT id,
      any(visitParamExtractString(data, 'proposalId')) AS pid,
      any(visitParamExtractString(data, 'status')) AS st,
      any(visitParamExtractString(data, 'category')) AS cat,
      any(visitParamExtractInt(data, 'ballots')) AS b,
      any(multiIf(type = 'proposal.created', 0, type = 'proposal.opened', 1, 2)) AS rk
    FROM %s.%s
    WHERE topic = 'events.gov' AND type IN ('proposal.created', 'proposal.opened', 'proposal.passed', 'proposal.rejected')
    GROUP BY id
  ) GROUP BY pid
) GROUP BY st, cat`

// QueryGovStats returns the proposal counts per (status, category).
func QueryGovStats(ctx context.Context, conn driver.Conn, db string) ([]GovStatusCount, error) {
	rows, err := conn.Query(ctx, fmt.Sprintf(govStatsSQL, db, TableEvents))
	if err != nil {
		return nil, fmt.Errorf("query governance stats: %w", err)
	}
	defer rows.Close()
	var out []GovStatusCount
	for rows.Next() {
		var r GovStatusCount
		if err := rows.Scan(&r.Status, &r.Category, &r.Proposals, &r.Ballots); err != nil {
			return nil, fmt.Errorf("scan governance stats: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query governance stats: %w", err)
	}
	return out, nil
}

// GovStats returns the proposal counts per (status, category).
func (a *Analytics) GovStats(ctx context.Context) ([]GovStatusCount, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	return QueryGovStats(ctx, c, a.db)
}
