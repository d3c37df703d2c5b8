package fiat

import (
	"context"
	"fmt"

	"github.com/fintech/platform/storage/postgres"
)

// Mismatch is a row whose stored total differs from the sum of its history.
type Mismatch struct {
	ID       string
	Stored   int64
	Computed int64
}

// Every movement of a wallet's balance is a completed transaction: the
// sender pays amount + fee, the receiver gets amount, and the fee goes to
// the platform's fee wallet of the currency.
const balanceMismatchSQL = `
WITH flows AS (
    SELECT to_wallet AS wallet, amount AS delta FROM fiat_transactions WHERE status = 'completed' AND to_wallet <> ''
    UNION ALL
    SELECT from_wallet, -(amount + fee) FROM fiat_transactions WHERE status = 'completed' AND from_wallet <> ''
    UNION ALL
    SELECT 'fee-' || currency, fee FROM fiat_transactions WHERE status = 'completed' AND fee <> 0
), sums AS (
    SELECT wallet, sum(delta)::bigint AS total FROM flows GROUP BY wallet
)
SELECT w.id, w.balance, coalesce(s.total, 0), count(*) OVER ()
FROM fiat_wallets w
FULL JOIN sums s ON s.wallet = w.id
WHERE w.id IS NULL OR w.balance <> coalesce(s.total, 0)
ORDER BY w.id
LIMIT 10`

// VerifyBalances checks that every wallet's balance is the sum of its
// completed transactions. It returns how many wallets it checked and up to
// ten that differ (a transaction naming a wallet that does not exist
// counts, with an empty stored balance), with how many differ in all.
func VerifyBalances(ctx context.Context, q postgres.Querier) (wallets int64, bad []Mismatch, badCount int64, err error) {
	if err := q.QueryRow(ctx, `SELECT count(*) FROM fiat_wallets`).Scan(&wallets); err != nil {
		return 0, nil, 0, fmt.Errorf("count wallets: %w", err)
	}
	rows, err := q.Query(ctx, balanceMismatchSQL)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("sum transactions per wallet: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Mismatch
		var id *string
		var stored *int64
		if err := rows.Scan(&id, &stored, &m.Computed, &badCount); err != nil {
			return 0, nil, 0, fmt.Errorf("scan wallet sum: %w", err)
		}
		if id != nil {
			m.ID = *id
		}
		if stored != nil {
			m.Stored = *stored
		}
		bad = append(bad, m)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, 0, fmt.Errorf("sum transactions per wallet: %w", err)
	}
	return wallets, bad, badCount, nil
}
