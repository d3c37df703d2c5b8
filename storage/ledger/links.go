package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The first entry whose link does not hold: its height does not follow the
// previous one, or its prevHash is not the previous entry's hash (64 zeros
// for the first).
const firstBrokenLinkSQL = `
SELECT height, reason FROM (
    SELECT height,
           CASE WHEN height <> coalesce(lag(height) OVER w, 0) + 1 THEN 'height_gap'
                WHEN prev_hash <> coalesce(lag(hash) OVER w, repeat('0', 64)) THEN 'prev_hash_mismatch'
           END AS reason
    FROM ledger_entries WINDOW w AS (ORDER BY height)
) l WHERE reason IS NOT NULL ORDER BY height LIMIT 1`

// VerifyLinks checks the chain's links without the salt: heights follow
// each other from 1 and every prevHash is the previous entry's hash (the
// hashes themselves are recomputed only by Verify, which needs the salt).
// It returns the number of entries and, when a link breaks, its height and
// reason.
func VerifyLinks(ctx context.Context, db Conn) (entries int64, brokenAt *int64, reason string, err error) {
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ledger_entries`).Scan(&entries); err != nil {
		return 0, nil, "", fmt.Errorf("count ledger entries: %w", err)
	}
	var h int64
	err = db.QueryRow(ctx, firstBrokenLinkSQL).Scan(&h, &reason)
	if errors.Is(err, pgx.ErrNoRows) {
		return entries, nil, "", nil
	}
	if err != nil {
		return 0, nil, "", fmt.Errorf("walk ledger links: %w", err)
	}
	return entries, &h, reason, nil
}
