// Package trade stores the test-net wallet: accounts (one per user) with
// their balance in units of 10^-7 TNU, and the operations that moved them.
// Accounts reads and opens accounts for the gateway; Store is the trade
// consumer's access inside its batch transaction.
package trade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// AccountRow is a trade_accounts row.
type AccountRow struct {
	ID        string    `db:"id"`
	UserID    string    `db:"user_id"`
	Currency  string    `db:"currency"`
	Balance   int64     `db:"balance"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// View is the API shape of the account.
func (a AccountRow) View() schemas.TradeAccount {
	return schemas.TradeAccount{ID: a.ID, Balance: schemas.TNU(a.Balance), Currency: a.Currency, CreatedAt: a.CreatedAt.UTC()}
}

// OperationRow is a trade_operations row; From is nil for a top-up.
type OperationRow struct {
	ID        string    `db:"id"`
	Kind      string    `db:"kind"`
	Amount    int64     `db:"amount"`
	From      *string   `db:"from_account"`
	To        string    `db:"to_account"`
	CreatedAt time.Time `db:"created_at"`
}

// View is the API shape of the operation.
func (o OperationRow) View() schemas.TradeOperation {
	return schemas.TradeOperation{ID: o.ID, Kind: o.Kind, Amount: schemas.TNU(o.Amount), From: o.From, To: o.To,
		CreatedAt: o.CreatedAt.UTC()}
}

const (
	accountColumns   = `id, user_id, currency, balance, created_at, updated_at`
	operationColumns = `id, kind, amount, from_account, to_account, created_at`
)

// Accounts is the gateway's access to accounts and operations.
type Accounts struct {
	pool *pgxpool.Pool
}

// NewAccounts builds the repository.
func NewAccounts(pool *pgxpool.Pool) *Accounts { return &Accounts{pool: pool} }

const openSQL = `
INSERT INTO trade_accounts (id, user_id, currency, balance, created_at, updated_at)
VALUES ($1, $2, $3, 0, $4, $4) ON CONFLICT (user_id) DO NOTHING`

// Open returns the user's account, creating it with a zero balance (and the
// given id) when the user has none yet. Concurrent calls create one account.
func (a *Accounts) Open(ctx context.Context, userID, newID string, now time.Time) (AccountRow, error) {
	if _, err := a.pool.Exec(ctx, openSQL, newID, userID, schemas.TradeCurrency, now); err != nil {
		return AccountRow{}, fmt.Errorf("open trade account of %s: %w", userID, err)
	}
	return a.ByUser(ctx, userID)
}

// ByUser returns the user's account or postgres.ErrNotFound.
func (a *Accounts) ByUser(ctx context.Context, userID string) (AccountRow, error) {
	return a.one(ctx, `SELECT `+accountColumns+` FROM trade_accounts WHERE user_id = $1`, userID)
}

// Lookup is an account found by its owner's e-mail.
type Lookup struct {
	ID    string
	Owner string
}

const byEmailSQL = `
SELECT a.id, u.email FROM trade_accounts a JOIN users u ON u.id = a.user_id
WHERE lower(u.email) = lower($1)`

// ByEmail finds the account of the user with that e-mail
// (case-insensitively) or returns postgres.ErrNotFound.
func (a *Accounts) ByEmail(ctx context.Context, email string) (Lookup, error) {
	var l Lookup
	if err := a.pool.QueryRow(ctx, byEmailSQL, email).Scan(&l.ID, &l.Owner); err != nil {
		return Lookup{}, fmt.Errorf("find trade account by e-mail: %w", postgres.Translate(err))
	}
	return l, nil
}

func (a *Accounts) one(ctx context.Context, sql string, args ...any) (AccountRow, error) {
	rows, err := a.pool.Query(ctx, sql, args...)
	if err != nil {
		return AccountRow{}, fmt.Errorf("read trade account: %w", err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AccountRow])
	if err != nil {
		return AccountRow{}, fmt.Errorf("read trade account: %w", postgres.Translate(err))
	}
	return r, nil
}

// The operations of an account are those it sent and those it received
// (never both: a transfer to oneself is refused), newest first by creation
// time (microseconds) then id: ids are ksuids, whose time part has
// one-second resolution.
const (
	operationsSQL = `
SELECT ` + operationColumns + ` FROM (
  (SELECT ` + operationColumns + ` FROM trade_operations WHERE from_account = $1 AND ($2 = '' OR (created_at, id) < ($4, $2))
   ORDER BY created_at DESC, id DESC LIMIT $3)
  UNION ALL
  (SELECT ` + operationColumns + ` FROM trade_operations WHERE to_account = $1 AND ($2 = '' OR (created_at, id) < ($4, $2))
   ORDER BY created_at DESC, id DESC LIMIT $3)
) o ORDER BY created_at DESC, id DESC LIMIT $3`
	countOperationsSQL = `
SELECT (SELECT count(*) FROM trade_operations WHERE from_account = $1)
     + (SELECT count(*) FROM trade_operations WHERE to_account = $1)`
	streamOperationsSQL = `
SELECT ` + operationColumns + ` FROM trade_operations WHERE from_account = $1
UNION ALL
SELECT ` + operationColumns + ` FROM trade_operations WHERE to_account = $1
ORDER BY created_at DESC, id DESC`
)

// Operations returns up to limit operations of the account older than the
// position after (zero: from the newest), newest first.
func (a *Accounts) Operations(ctx context.Context, accountID string, after schemas.Position, limit int) ([]OperationRow, error) {
	rows, err := a.pool.Query(ctx, operationsSQL, accountID, after.ID, limit, after.At)
	if err != nil {
		return nil, fmt.Errorf("list trade operations: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[OperationRow])
	if err != nil {
		return nil, fmt.Errorf("list trade operations: %w", err)
	}
	return list, nil
}

// CountOperations counts every operation of the account.
func (a *Accounts) CountOperations(ctx context.Context, accountID string) (int64, error) {
	var n int64
	if err := a.pool.QueryRow(ctx, countOperationsSQL, accountID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count trade operations: %w", err)
	}
	return n, nil
}

// StreamOperations calls fn for every operation of the account, newest
// first, reading rows from the database as fn consumes them: memory stays
// constant whatever the number of operations. An error from fn stops it.
func (a *Accounts) StreamOperations(ctx context.Context, accountID string, fn func(OperationRow) error) error {
	rows, err := a.pool.Query(ctx, streamOperationsSQL, accountID)
	if err != nil {
		return fmt.Errorf("stream trade operations: %w", err)
	}
	defer rows.Close()
	var o OperationRow
	for rows.Next() {
		if err := rows.Scan(&o.ID, &o.Kind, &o.Amount, &o.From, &o.To, &o.CreatedAt); err != nil {
			return fmt.Errorf("scan trade operation: %w", err)
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("stream trade operations: %w", err)
	}
	return nil
}

// IsNotFound reports whether err is a missing row.
func IsNotFound(err error) bool { return errors.Is(err, postgres.ErrNotFound) }
