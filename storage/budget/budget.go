// Package budget keeps the abuse budgets' counters (schemas/budgets.go) in
// Postgres, so that every gateway and consumer process shares them and a
// restart does not refill them.
package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
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
// window. A limit of 0 or less is not charged. A Soft charge never refuses:
// past its limit it is still counted and reported (Result.Over).
type Charge struct {
	Budget, Scope, Subject string
	Limit                  int64
	Soft                   bool
}

// Charges lists what b costs account and ip (either may be ""), in the
// order Take locks them: account, ip, global.
//
// The global charge is soft. A hard global limit is a kill switch that one
// actor with enough addresses can pull for everyone (25 addresses spend 500
// proposals a day for the whole site); the account and IP budgets bound
// each actor, and the global count is an alarm for operators (logged and
// answered in Result.Over), or, where a call costs money (AI), a switch to
// the free path instead of a refusal.
func Charges(b schemas.Budget, account, ip string) []Charge {
	out := make([]Charge, 0, 3)
	if account != "" {
		out = append(out, Charge{Budget: b.Name, Scope: ScopeAccount, Subject: account, Limit: b.PerAccount})
	}
	if ip != "" {
		out = append(out, Charge{Budget: b.Name, Scope: ScopeIP, Subject: ip, Limit: b.PerIP})
	}
	return append(out, Charge{Budget: b.Name, Scope: ScopeGlobal, Limit: b.Global, Soft: true})
}

// Beginner is a pool or a transaction (whose Begin is a savepoint).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// errExhausted rolls a Take back; never returned.
var errExhausted = errors.New("budget exhausted")

// Result is the outcome of TakeAll: OK when charged; otherwise Exhausted is
// the hard charge at its limit. Over lists the soft charges past their
// limit (charged all the same).
type Result struct {
	OK        bool
	Exhausted Charge
	Over      []Charge
}

// Take is TakeAll answering only whether it charged and, if not, what was
// exhausted.
func Take(ctx context.Context, db Beginner, window time.Time, charges []Charge) (exhausted Charge, ok bool, err error) {
	r, err := TakeAll(ctx, db, window, charges)
	return r.Exhausted, r.OK, err
}

// TakeAll charges one unit to every charge in the window starting at
// window, all or none: when one hard counter is at its limit nothing is
// charged and the exhausted charge is returned. Charges are taken in the
// order given, which callers keep fixed (account, ip, global) so that
// concurrent takers lock rows in one order.
func TakeAll(ctx context.Context, db Beginner, window time.Time, charges []Charge) (Result, error) {
	var res Result
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		res.Over = nil
		for _, c := range charges {
			if c.Limit <= 0 {
				continue
			}
			ceiling := c.Limit
			if c.Soft {
				ceiling = math.MaxInt64
			}
			var used int64
			err := tx.QueryRow(ctx, `INSERT INTO abuse_budgets AS b (budget, scope, subject, window_start, used)
VALUES ($1, $2, $3, $4, 1)
ON CONFLICT (budget, scope, subject, window_start) DO UPDATE SET used = b.used + 1 WHERE b.used < $5
RETURNING used`, c.Budget, c.Scope, c.Subject, window, ceiling).Scan(&used)
			if errors.Is(err, pgx.ErrNoRows) {
				res.Exhausted = c
				return errExhausted
			}
			if err != nil {
				return err
			}
			if used > c.Limit {
				res.Over = append(res.Over, c)
			}
		}
		return nil
	})
	if errors.Is(err, errExhausted) {
		return Result{Exhausted: res.Exhausted}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("take budget: %w", err)
	}
	res.OK = true
	return res, nil
}

// Refund gives back one unit of every charge taken in the window (a
// request the budget admitted but the module then refused: a duplicate
// ballot, an idempotent replay). A counter never goes below zero.
func Refund(ctx context.Context, db Beginner, window time.Time, charges []Charge) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, c := range charges {
			if c.Limit <= 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE abuse_budgets SET used = used - 1
WHERE budget = $1 AND scope = $2 AND subject = $3 AND window_start = $4 AND used > 0`,
				c.Budget, c.Scope, c.Subject, window); err != nil {
				return fmt.Errorf("refund budget %s: %w", c.Budget, err)
			}
		}
		return nil
	})
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
