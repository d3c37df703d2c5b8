package ratelimit

import (
	"context"
	"strconv"
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
}

// NewBudgets builds the budgets on db (the pool). now is the clock.
func NewBudgets(db budget.Beginner, now func() time.Time) *Budgets {
	return &Budgets{db: db, now: now}
}

// Take charges one unit of b to account (may be "") and the client IP of
// c, and to the global counter, all or none. Spent → 429 rate_limited with
// Retry-After (seconds to the window's end) and extra fields naming the
// budget and its scope. A nil Budgets (ABUSE_BUDGETS=0) charges nothing.
func (bs *Budgets) Take(c *fiber.Ctx, b schemas.Budget, account string) error {
	if bs == nil {
		return nil
	}
	return bs.take(c.UserContext(), c, b, account, clientip.Key(c))
}

func (bs *Budgets) take(ctx context.Context, c *fiber.Ctx, b schemas.Budget, account, ip string) error {
	now := bs.now()
	start, end := b.Window(now)
	spent, ok, err := budget.Take(ctx, bs.db, start, budget.Charges(b, account, ip))
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	retry := int(end.Sub(now).Seconds()) + 1
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retry))
	return apierr.RateLimited().With(map[string]any{
		"budget": b.Name, "scope": spent.Scope, "limit": spent.Limit, "resetAt": end.Format(time.RFC3339),
	})
}
