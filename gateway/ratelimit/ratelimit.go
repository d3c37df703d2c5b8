// Package ratelimit enforces per-client-IP request budgets by class (auth,
// write, money, read, partner) in fixed one-minute windows, and sets the
// RateLimit headers on every response.
package ratelimit

import (
	"strconv"
	"strings"
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
	if ok {
		l.remember(ctx, c, key)
	}
	return l.answer(ctx, c, ok, limit, remaining, reset)
}

// charge is one unit a request spent: its class, key and window.
type charge struct {
	class  Class
	key    string
	minute int64
}

// chargesKey is the fiber Locals key of the charges a request made.
type chargesKey struct{}

// remember notes on the request the unit it spent, for Refund.
func (l *Limiter) remember(ctx *fiber.Ctx, c Class, key string) {
	if l.limits.of(c) <= 0 {
		return
	}
	prev, _ := ctx.Locals(chargesKey{}).([]charge)
	ctx.Locals(chargesKey{}, append(prev, charge{class: c, key: strings.Clone(key), minute: l.now().Unix() / 60}))
}

// Refund gives back every unit the request spent (Check, Handler, Also) in
// windows that are still current, and lowers the Remaining its headers
// show accordingly. The server calls it for a write answered 503: its retry
// with the same Idempotency-Key is the same command, charged once when it
// is answered, so a client that rides out a failover by retrying as the
// 503 says is never turned into a 429 by its own retries. (Each gateway
// keeps its own counters and a retry may reach the other one: giving the
// unit back where it was spent is what works across gateways.)
func (l *Limiter) Refund(ctx *fiber.Ctx) {
	charges, _ := ctx.Locals(chargesKey{}).([]charge)
	if len(charges) == 0 {
		return
	}
	ctx.Locals(chargesKey{}, nil)
	for _, ch := range charges {
		w := l.windows[ch.class]
		w.mu.Lock()
		n, ok := w.counts[ch.key]
		if w.start == ch.minute && ok && n > 0 {
			if n == 1 {
				delete(w.counts, ch.key)
			} else {
				w.counts[ch.key] = n - 1
			}
			n--
		}
		w.mu.Unlock()
		// The headers name the first class charged (Also's replace them
		// only when it refuses, and then nothing was charged by it).
		if ch == charges[0] {
			if limit := l.limits.of(ch.class); limit > 0 {
				rs := strconv.Itoa(max(limit-n, 0))
				ctx.Set("RateLimit-Remaining", rs)
				ctx.Set("RateLimit", `"`+ch.class.String()+`";r=`+rs+`;t=`+string(ctx.Response().Header.Peek("RateLimit-Reset")))
			}
		}
	}
}

// Also charges a second class c to key beside the one whose headers the
// request already carries: its headers replace them only when it refuses
// the request (429 with its Retry-After).
func (l *Limiter) Also(ctx *fiber.Ctx, c Class, key string) error {
	ok, limit, remaining, reset := l.Take(c, key)
	if ok {
		l.remember(ctx, c, key)
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
