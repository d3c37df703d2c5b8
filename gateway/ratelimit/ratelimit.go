// Package ratelimit enforces per-client-IP request budgets by class (auth,
// write, money, read, partner) in fixed one-minute windows, and sets the
// RateLimit headers on every response.
package ratelimit

import (
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/clientip"
)

// Class is a rate-limit class of decisions.md.
type Class int

// The classes, each with its own per-minute budget.
const (
	Read Class = iota
	Write
	Auth
	Money
	Partner
	// PartnerIP is the partner API's budget per client IP, charged beside
	// the per-key Partner budget (Also), so that many keys behind one
	// address do not multiply the rate.
	PartnerIP
	numClasses
)

var classNames = [numClasses]string{"read", "write", "auth", "money", "partner", "partner-ip"}

func (c Class) String() string { return classNames[c] }

// Limits are requests per minute per client IP; 0 disables a class.
type Limits struct {
	Read, Write, Auth, Money, Partner, PartnerIP int
}

func (l Limits) of(c Class) int {
	return [numClasses]int{l.Read, l.Write, l.Auth, l.Money, l.Partner, l.PartnerIP}[c]
}

// Limiter holds one fixed-window counter table per class.
type Limiter struct {
	limits  Limits
	now     func() time.Time
	windows [numClasses]*window
	keys    [numClasses]func(*fiber.Ctx) string
}

type window struct {
	mu     sync.Mutex
	start  int64 // unix minute of the current window
	counts map[string]int
}

// New builds a limiter. now is the clock (time.Now in production).
func New(limits Limits, now func() time.Time) *Limiter {
	l := &Limiter{limits: limits, now: now}
	for i := range l.windows {
		l.windows[i] = &window{counts: map[string]int{}}
	}
	return l
}

// Take counts one request of class c by key and reports whether it is
// allowed, with the limit, what remains and the seconds until the window
// resets. A disabled class always allows and reports limit 0.
func (l *Limiter) Take(c Class, key string) (allowed bool, limit, remaining, reset int) {
	limit = l.limits.of(c)
	if limit <= 0 {
		return true, 0, 0, 0
	}
	now := l.now()
	minute := now.Unix() / 60
	reset = int(60 - now.Unix()%60)
	w := l.windows[c]
	w.mu.Lock()
	if w.start != minute {
		// A new window: drop every old counter, which also bounds memory.
		w.start = minute
		clear(w.counts)
	}
	n := w.counts[key] + 1
	w.counts[key] = n
	w.mu.Unlock()
	if n > limit {
		return false, limit, 0, reset
	}
	return true, limit, limit - n, reset
}

// KeyBy makes Handler charge class c to key(ctx) instead of the client IP
// (for example a partner API key, falling back to the IP). Call it while
// wiring, before the server takes requests.
func (l *Limiter) KeyBy(c Class, key func(*fiber.Ctx) string) {
	l.keys[c] = key
}

// Handler returns middleware that charges class c to the client IP (or to
// the key function set by KeyBy), sets the RateLimit headers and answers 429
// rate_limited with Retry-After when the budget is spent.
func (l *Limiter) Handler(c Class) fiber.Handler {
	return func(ctx *fiber.Ctx) error {
		key := clientip.Key(ctx)
		if keyOf := l.keys[c]; keyOf != nil {
			key = keyOf(ctx)
		}
		if err := l.Check(ctx, c, key); err != nil {
			return err
		}
		return ctx.Next()
	}
}

// Check charges class c to key, sets the headers, and returns the 429 error
// when over budget.
func (l *Limiter) Check(ctx *fiber.Ctx, c Class, key string) error {
	ok, limit, remaining, reset := l.Take(c, key)
	return l.answer(ctx, c, ok, limit, remaining, reset)
}

// Also charges a second class c to key beside the one whose headers the
// request already carries: its headers replace them only when it refuses
// the request (429 with its Retry-After).
func (l *Limiter) Also(ctx *fiber.Ctx, c Class, key string) error {
	ok, limit, remaining, reset := l.Take(c, key)
	if ok {
		return nil
	}
	return l.answer(ctx, c, ok, limit, remaining, reset)
}

func (l *Limiter) answer(ctx *fiber.Ctx, c Class, ok bool, limit, remaining, reset int) error {
	if limit == 0 {
		return nil
	}
	ls, rs, ts := strconv.Itoa(limit), strconv.Itoa(remaining), strconv.Itoa(reset)
	ctx.Set("RateLimit-Limit", ls)
	ctx.Set("RateLimit-Remaining", rs)
	ctx.Set("RateLimit-Reset", ts)
	ctx.Set("RateLimit-Policy", `"`+c.String()+`";q=`+ls+`;w=60`)
	ctx.Set("RateLimit", `"`+c.String()+`";r=`+rs+`;t=`+ts)
	if !ok {
		ctx.Set(fiber.HeaderRetryAfter, ts)
		return apierr.RateLimited()
	}
	return nil
}
