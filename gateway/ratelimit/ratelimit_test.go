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
