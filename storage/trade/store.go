package trade

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// Store is the trade consumer's access to Postgres inside its batch
// transaction. It holds no state: every method works on the caller's tx.
type Store struct{}

// NewStore builds the store.
func NewStore() *Store { return &Store{} }

const lockAccountsSQL = `SELECT ` + accountColumns + ` FROM trade_accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE`

// LockAccounts reads the accounts among ids and locks their rows until tx
// ends, in id order in one statement, so two consumers (the sender's and the
// receiver's partitions) never deadlock. Unknown ids are absent.
func (s *Store) LockAccounts(ctx context.Context, tx pgx.Tx, ids []string) (map[string]AccountRow, error) {
	out := make(map[string]AccountRow, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	rows, err := tx.Query(ctx, lockAccountsSQL, sorted)
	if err != nil {
		return nil, fmt.Errorf("lock %d trade accounts: %w", len(ids), err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[AccountRow])
	if err != nil {
		return nil, fmt.Errorf("lock %d trade accounts: %w", len(ids), err)
	}
	for _, a := range list {
		out[a.ID] = a
	}
	return out, nil
}

// Balance is the new balance of an account after a batch.
type Balance struct {
	AccountID string
	Balance   int64
	UpdatedAt time.Time
}

const updateBalancesSQL = `
UPDATE trade_accounts a SET balance = v.balance, updated_at = v.updated_at
FROM unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS v(id, balance, updated_at)
WHERE a.id = v.id`

// Save writes a batch's changes: one update for all the balances it moved
// (rows already locked by LockAccounts) and its operations.
func (s *Store) Save(ctx context.Context, tx pgx.Tx, balances []Balance, ops []OperationRow) error {
	if len(balances) > 0 {
		ids, bals, times := make([]string, len(balances)), make([]int64, len(balances)), make([]time.Time, len(balances))
		for i, b := range balances {
			ids[i], bals[i], times[i] = b.AccountID, b.Balance, b.UpdatedAt
		}
		if _, err := tx.Exec(ctx, updateBalancesSQL, ids, bals, times); err != nil {
			return fmt.Errorf("update %d trade balances: %w", len(balances), err)
		}
	}
	if len(ops) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"trade_operations"},
		[]string{"id", "kind", "amount", "from_account", "to_account", "created_at"},
		pgx.CopyFromSlice(len(ops), func(i int) ([]any, error) {
			o := ops[i]
			return []any{o.ID, o.Kind, o.Amount, o.From, o.To, o.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d trade operations: %w", len(ops), err)
	}
	return nil
}
