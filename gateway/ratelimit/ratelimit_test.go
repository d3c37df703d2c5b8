package ratelimit

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
)

func TestTake(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC)
	clock := func() time.Time { return now }
	l := New(Limits{Read: 3, Write: 0, Auth: 1}, clock)

	tests := []struct {
		name      string
		class     Class
		key       string
		advance   time.Duration
		allowed   bool
		remaining int
		reset     int
	}{
		{"first read", Read, "a", 0, true, 2, 45},
		{"second read", Read, "a", 0, true, 1, 45},
		{"other ip has its own budget", Read, "b", 0, true, 2, 45},
		{"third read", Read, "a", 0, true, 0, 45},
		{"fourth read refused", Read, "a", 0, false, 0, 45},
		{"auth is a separate class", Auth, "a", 0, true, 0, 45},
		{"auth over budget", Auth, "a", 0, false, 0, 45},
		{"disabled class always allows", Write, "a", 0, true, 0, 0},
		{"new window resets", Read, "a", time.Minute, true, 2, 45},
	}
	for _, tt := range tests {
		now = now.Add(tt.advance)
		ok, _, rem, reset := l.Take(tt.class, tt.key)
		if ok != tt.allowed || rem != tt.remaining || reset != tt.reset {
			t.Fatalf("%s: got allowed=%v remaining=%d reset=%d", tt.name, ok, rem, reset)
		}
	}
}

// TestHandlerKeyBy charges a class to the key a KeyBy function returns: two
// keys from one IP have separate budgets, and requests without a key fall
// back to the IP; other classes stay per IP.
func TestHandlerKeyBy(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC)
	l := New(Limits{Read: 1, Partner: 2}, func() time.Time { return now })
	l.KeyBy(Partner, func(c *fiber.Ctx) string {
		if k := c.Get("X-Key"); k != "" {
			return "key:" + k
		}
		return c.IP()
	})
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return c.SendStatus(ae.Status)
		}
		return c.SendStatus(http.StatusInternalServerError)
	}})
	app.Get("/p", l.Handler(Partner), func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/r", l.Handler(Read), func(c *fiber.Ctx) error { return c.SendString("ok") })
	get := func(path, key string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if key != "" {
			req.Header.Set("X-Key", key)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("RateLimit-Remaining")
	}
	tests := []struct {
		path, key string
		status    int
		remaining string
	}{
		{"/p", "a", 200, "1"},
		{"/p", "a", 200, "0"},
		{"/p", "a", 429, "0"},
		{"/p", "b", 200, "1"}, // another key from the same IP
		{"/p", "", 200, "1"},  // no key: the IP's own budget
		{"/p", "", 200, "0"},
		{"/p", "", 429, "0"},
		{"/r", "a", 200, "0"}, // Read is still per IP
		{"/r", "b", 429, "0"},
	}
	for i, tt := range tests {
		status, rem := get(tt.path, tt.key)
		if status != tt.status || rem != tt.remaining {
			t.Fatalf("request %d (%s key %q): status %d remaining %s, want %d %s", i, tt.path, tt.key, status, rem, tt.status, tt.remaining)
		}
	}
}

// TestRefundGivesBackEveryCharge: Refund gives back what a request spent in
// every class it was charged to (the per-key class of KeyBy and the per-IP
// class of Also), so a request refunded costs neither budget; a charge of
// a window that has ended is not given back to the new one.
func TestRefundGivesBackEveryCharge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC)
	l := New(Limits{Partner: 1, PartnerIP: 1}, func() time.Time { return now })
	l.KeyBy(Partner, func(c *fiber.Ctx) string { return "key:" + c.Get("X-Key") })
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return c.SendStatus(ae.Status)
		}
		return c.SendStatus(http.StatusInternalServerError)
	}})
	app.Post("/p", l.Handler(Partner), func(c *fiber.Ctx) error {
		if err := l.Also(c, PartnerIP, c.IP()); err != nil {
			return err
		}
		if c.Get("X-Fail") != "" {
			defer l.Refund(c)
			return c.SendStatus(http.StatusServiceUnavailable)
		}
		return c.SendString("ok")
	})
	post := func(fail bool) int {
		req := httptest.NewRequest(http.MethodPost, "/p", nil)
		req.Header.Set("X-Key", "a")
		if fail {
			req.Header.Set("X-Fail", "1")
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	for i, tt := range []struct {
		fail    bool
		advance time.Duration
		want    int
	}{
		{true, 0, 503}, {true, 0, 503}, {false, 0, 200}, {false, 0, 429},
		{true, 0, 429}, // refused before it ran: nothing to give back
		{false, time.Minute, 200},
	} {
		now = now.Add(tt.advance)
		if got := post(tt.fail); got != tt.want {
			t.Fatalf("request %d: %d, want %d", i, got, tt.want)
		}
	}
	// A refund after the window ended leaves the new window alone: the
	// request charged at :59 and refunded at the next minute's :00 does not
	// free a unit of the new minute.
	app.Post("/late", l.Handler(Partner), func(c *fiber.Ctx) error {
		now = now.Add(time.Minute)
		l.Take(Partner, "key:late") // another request of the new minute
		l.Refund(c)
		return c.SendString("ok")
	})
	req := httptest.NewRequest(http.MethodPost, "/late", nil)
	req.Header.Set("X-Key", "late")
	if resp, err := app.Test(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("late: %v %v", resp, err)
	}
	if ok, _, _, _ := l.Take(Partner, "key:late"); ok {
		t.Fatal("a refund of an ended window freed a unit of the new one")
	}
}
