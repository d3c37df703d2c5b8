package ratelimit

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/clientip"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/budget"
)

// Budgets charges the abuse budgets of schemas/budgets.go, kept in Postgres
// (storage/budget) so that every gateway shares them. The per-minute
// classes above bound request rates per IP in memory; a budget bounds what
// a request costs (an AI call, a ballot, a key) per account, per IP and in
// total, over a day or a month.
type Budgets struct {
	db  budget.Beginner
	now func() time.Time
	// Log, when set, receives the global-level alarms (once per budget
	// and window) and failed refunds.
	Log     *slog.Logger
	alarmed sync.Map
}

// NewBudgets builds the budgets on db (the pool). now is the clock.
func NewBudgets(db budget.Beginner, now func() time.Time) *Budgets {
	return &Budgets{db: db, now: now}
}

// Ticket is a charge Take made. Refund gives it back when the request
// turns out to be refused after all (only accepted requests spend a
// budget); OverGlobal says the global count is past its alarm level.
type Ticket struct {
	bs      *Budgets
	window  time.Time
	charges []budget.Charge
	over    bool
}

// OverGlobal reports whether the global count of the budget is past its
// level (the request was admitted all the same).
func (t *Ticket) OverGlobal() bool { return t != nil && t.over }

// Refund gives the charge back (a no-op on a nil Ticket). A failed refund
// is logged: the unit stays spent, which errs on the side of the budget.
func (t *Ticket) Refund(ctx context.Context) {
	if t == nil {
		return
	}
	if err := budget.Refund(context.WithoutCancel(ctx), t.bs.db, t.window, t.charges); err != nil && t.bs.Log != nil {
		t.bs.Log.Warn("budget refund failed", "budget", t.charges[0].Budget, "err", err)
	}
}

// Take charges one unit of b to account (may be "") and the client IP of
// c, and to the global counter, all or none. Spent → 429 rate_limited with
// Retry-After (seconds to the window's end) and extra fields naming the
// budget and its scope. The global counter never refuses (storage/budget
// Charges): past its level it is logged once a window and reported by the
// ticket. A nil Budgets (ABUSE_BUDGETS=0) charges nothing.
func (bs *Budgets) Take(c *fiber.Ctx, b schemas.Budget, account string) (*Ticket, error) {
	if bs == nil {
		return nil, nil
	}
	return bs.take(c.UserContext(), c, b, account, clientip.Key(c))
}

func (bs *Budgets) take(ctx context.Context, c *fiber.Ctx, b schemas.Budget, account, ip string) (*Ticket, error) {
	now := bs.now()
	start, end := b.Window(now)
	charges := budget.Charges(b, account, ip)
	res, err := budget.TakeAll(ctx, bs.db, start, charges)
	if err != nil {
		return nil, err
	}
	if res.OK {
		t := &Ticket{bs: bs, window: start, charges: charges, over: len(res.Over) > 0}
		if t.over && bs.Log != nil {
			if _, seen := bs.alarmed.LoadOrStore(b.Name+start.String(), true); !seen {
				bs.Log.Warn("global abuse budget past its level: requests are still admitted (per-account and per-IP budgets bound each actor); look for an attack from many addresses",
					"budget", b.Name, "level", b.Global, "window", start.Format(time.RFC3339))
			}
		}
		return t, nil
	}
	retry := int(end.Sub(now).Seconds()) + 1
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retry))
	return nil, apierr.RateLimited().With(map[string]any{
		"budget": b.Name, "scope": res.Exhausted.Scope, "limit": res.Exhausted.Limit, "resetAt": end.Format(time.RFC3339),
	})
}
