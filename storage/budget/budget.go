// Package budget keeps the abuse budgets' counters (schemas/budgets.go) in
// Postgres, so that every gateway and consumer process shares them and a
// restart does not refill them.
package budget

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// Scopes of a charge.
const (
	ScopeAccount = "account"
	ScopeIP      = "ip"
	ScopeGlobal  = "global"
)

// Charge is one counter to charge: the budget's name, its scope and subject
// (an account id, an IP, or "" for the global one) and its limit in the
// window. A limit of 0 or less is not charged.
type Charge struct {
	Budget, Scope, Subject string
	Limit                  int64
}

// Charges lists what b costs account and ip (either may be ""), in the
// order Take locks them: account, ip, global.
func Charges(b schemas.Budget, account, ip string) []Charge {
	out := make([]Charge, 0, 3)
	if account != "" {
		out = append(out, Charge{Budget: b.Name, Scope: ScopeAccount, Subject: account, Limit: b.PerAccount})
	}
	if ip != "" {
		out = append(out, Charge{Budget: b.Name, Scope: ScopeIP, Subject: ip, Limit: b.PerIP})
	}
	return append(out, Charge{Budget: b.Name, Scope: ScopeGlobal, Limit: b.Global})
}

// Beginner is a pool or a transaction (whose Begin is a savepoint).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// errExhausted rolls a Take back; never returned.
var errExhausted = errors.New("budget exhausted")

// Take charges one unit to every charge in the window starting at window,
// all or none: when one counter is at its limit nothing is charged and the
// exhausted charge is returned (ok false). Charges are taken in the order
// given, which callers keep fixed (account, ip, global) so that concurrent
// takers lock rows in one order.
func Take(ctx context.Context, db Beginner, window time.Time, charges []Charge) (exhausted Charge, ok bool, err error) {
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, c := range charges {
			if c.Limit <= 0 {
				continue
			}
			var used int64
			err := tx.QueryRow(ctx, `INSERT INTO abuse_budgets AS b (budget, scope, subject, window_start, used)
VALUES ($1, $2, $3, $4, 1)
ON CONFLICT (budget, scope, subject, window_start) DO UPDATE SET used = b.used + 1 WHERE b.used < $5
RETURNING used`, c.Budget, c.Scope, c.Subject, window, c.Limit).Scan(&used)
			if errors.Is(err, pgx.ErrNoRows) {
				exhausted = c
				return errExhausted
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errExhausted) {
		return exhausted, false, nil
	}
	if err != nil {
		return Charge{}, false, fmt.Errorf("take budget: %w", err)
	}
	return Charge{}, true, nil
}

// Used reads one counter (0 when never charged).
func Used(ctx context.Context, db postgres.Querier, window time.Time, c Charge) (int64, error) {
	var used int64
	err := db.QueryRow(ctx, `SELECT coalesce((SELECT used FROM abuse_budgets
WHERE budget = $1 AND scope = $2 AND subject = $3 AND window_start = $4), 0)`,
		c.Budget, c.Scope, c.Subject, window).Scan(&used)
	if err != nil {
		return 0, fmt.Errorf("read budget %s: %w", c.Budget, err)
	}
	return used, nil
}

// Prune deletes the counters of windows that started before before.
func Prune(ctx context.Context, db postgres.Querier, before time.Time) (int64, error) {
	tag, err := db.Exec(ctx, `DELETE FROM abuse_budgets WHERE window_start < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune budgets: %w", err)
	}
	return tag.RowsAffected(), nil
}
