package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// CharityStats are the charity aggregates of the donation.received events.
type CharityStats struct {
	TotalRaisedKzt int64
	// DonorCount counts distinct named donors (the events' actor) plus one
	// per anonymous donation: the sink does not store who gave anonymously,
	// so the exact figure is Postgres's (the API reads it there).
	DonorCount    int64
	TopCategories []CategoryRaised
}

// CategoryRaised is the amount raised by the campaigns of one category.
type CategoryRaised struct {
	Category  string
	RaisedKzt int64
}

// topCategoriesLimit is how many categories the stats list.
const topCategoriesLimit = 10

// dedupedDonations is one row per donation.received record (the sink may
// insert a record twice), with its amount, category and donor.
func dedupedDonations(db string) string {
	return `(SELECT id, any(actor_user_id) AS donor,
        visitParamExtractInt(any(data), 'amountKzt') AS amount,
        visitParamExtractString(any(data), 'category') AS category
    FROM ` + db + `.` + TableEvents + `
    WHERE topic = 'events.charity' AND type = 'donation.received'
    GROUP BY id)`
}

// QueryCharityStats computes the charity aggregates; it runs on ClickHouse
// 18.16 (visitParam functions, no JSON or window functions).
func QueryCharityStats(ctx context.Context, conn driver.Conn, db string) (CharityStats, error) {
	var out CharityStats
	q := `SELECT toInt64(sum(amount)), toInt64(uniqExactIf(donor, donor != '') + countIf(donor = '')) FROM ` + dedupedDonations(db)
	if err := conn.QueryRow(ctx, q).Scan(&out.TotalRaisedKzt, &out.DonorCount); err != nil {
		return CharityStats{}, fmt.Errorf("query charity totals: %w", err)
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT category, toInt64(sum(amount)) AS raised FROM %s
GROUP BY category ORDER BY raised DESC, category ASC LIMIT %d`, dedupedDonations(db), topCategoriesLimit))
	if err != nil {
		return CharityStats{}, fmt.Errorf("query charity categories: %w", err)
	}
	defer rows.Close()
	out.TopCategories = []CategoryRaised{}
	for rows.Next() {
		var c CategoryRaised
		if err := rows.Scan(&c.Category, &c.RaisedKzt); err != nil {
			return CharityStats{}, fmt.Errorf("scan charity category: %w", err)
		}
		out.TopCategories = append(out.TopCategories, c)
	}
	return out, rows.Err()
}

// CharityStats returns the charity aggregates.
func (a *Analytics) CharityStats(ctx context.Context) (CharityStats, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := a.open(ctx)
	if err != nil {
		return CharityStats{}, err
	}
	return QueryCharityStats(ctx, c, a.db)
}
