package reputation

import (
	"context"
	"fmt"

	"github.com/fintech/platform/storage/postgres"
)

// Mismatch is a user whose stored score (or event count) differs from the
// sum of their events.
type Mismatch struct {
	UserID                    string
	Score, EventSum           int64
	EventCount, EventsCounted int64
}

const scoreMismatchSQL = `
WITH sums AS (
    SELECT user_id, sum(weight)::bigint AS total, count(*) AS n FROM reputation_events GROUP BY user_id
)
SELECT coalesce(s.user_id, e.user_id), coalesce(s.score, 0), coalesce(e.total, 0),
       coalesce(s.event_count, 0), coalesce(e.n, 0), count(*) OVER ()
FROM reputation_scores s
FULL JOIN sums e ON e.user_id = s.user_id
WHERE coalesce(s.score, 0) <> coalesce(e.total, 0) OR coalesce(s.event_count, 0) <> coalesce(e.n, 0)
ORDER BY 1
LIMIT 10`

// VerifyScores checks that every user's score is the sum of the weights of
// their events and event_count their number. It returns how many scores it
// checked, up to ten that differ and how many differ in all.
func VerifyScores(ctx context.Context, q postgres.Querier) (users int64, bad []Mismatch, badCount int64, err error) {
	if err := q.QueryRow(ctx, `SELECT count(*) FROM reputation_scores`).Scan(&users); err != nil {
		return 0, nil, 0, fmt.Errorf("count scores: %w", err)
	}
	rows, err := q.Query(ctx, scoreMismatchSQL)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("sum events per user: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Mismatch
		if err := rows.Scan(&m.UserID, &m.Score, &m.EventSum, &m.EventCount, &m.EventsCounted, &badCount); err != nil {
			return 0, nil, 0, fmt.Errorf("scan user sum: %w", err)
		}
		bad = append(bad, m)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, 0, fmt.Errorf("sum events per user: %w", err)
	}
	return users, bad, badCount, nil
}
