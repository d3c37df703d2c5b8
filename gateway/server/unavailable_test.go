package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
)

// TestDatabaseUnavailableIs503: a handler failing because Postgres is
// failing over — no read-write server to connect to, a connection cut
// mid-query, a read-only or shutting-down server — answers 503 unavailable
// (retry with the same Idempotency-Key), not 500; a request's own database
// error (a unique violation, bad data) and any other error stay 500.
func TestDatabaseUnavailableIs503(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := s.Root().Group("/t")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"connect", fmt.Errorf("find wallet: %w", &pgconn.ConnectError{}), http.StatusServiceUnavailable},
		{"eof", fmt.Errorf("save: %w", io.ErrUnexpectedEOF), http.StatusServiceUnavailable},
		{"adminshutdown", fmt.Errorf("save: %w", &pgconn.PgError{Code: "57P01"}), http.StatusServiceUnavailable},
		{"shutdown", fmt.Errorf("save: %w", &pgconn.PgError{Code: "08006"}), http.StatusServiceUnavailable},
		{"read-only", fmt.Errorf("save: %w", &pgconn.PgError{Code: "25006"}), http.StatusServiceUnavailable},
		{"unique", fmt.Errorf("save: %w", &pgconn.PgError{Code: "23505"}), http.StatusInternalServerError},
		{"data", fmt.Errorf("save: %w", &pgconn.PgError{Code: "22P02"}), http.StatusInternalServerError},
		{"other", errors.New("something else"), http.StatusInternalServerError},
	}
	for _, c := range cases {
		g.Post("/"+c.name, ratelimit.Write, c.name, func(*fiber.Ctx) error { return c.err })
	}
	s.Finish()
	for _, c := range cases {
		resp, err := s.App.Test(httptest.NewRequest(http.MethodPost, "/t/"+c.name, nil))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if c.want == http.StatusServiceUnavailable && body["error"] != "unavailable" {
			t.Errorf("%s: %v, want error unavailable", c.name, body)
		}
	}
}

// TestEvery503CarriesRetryAfter: whoever answers 503 — a command that timed
// out (apierr.Unavailable), Postgres failing over, a handler writing the
// status itself (the health checks) — the answer carries Retry-After, so a
// client knows when to retry; a handler's own Retry-After is kept.
func TestEvery503CarriesRetryAfter(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{Read: 100, Write: 100}, time.Now), prometheus.NewRegistry(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := s.Root().Group("/t")
	g.Post("/command", ratelimit.Write, "times out", func(*fiber.Ctx) error { return apierr.Unavailable() })
	g.Post("/failover", ratelimit.Write, "meets a failover", func(*fiber.Ctx) error {
		return fmt.Errorf("save: %w", &pgconn.ConnectError{})
	})
	g.Get("/health", "degraded", func(c *fiber.Ctx) error {
		return c.Status(http.StatusServiceUnavailable).JSON(map[string]string{"status": "degraded"})
	})
	g.Get("/own", "its own Retry-After", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderRetryAfter, "30")
		return apierr.Unavailable()
	})
	s.Finish()
	for path, want := range map[string]string{"/t/command": "1", "/t/failover": "1", "/t/health": "1", "/t/own": "30"} {
		method := http.MethodGet
		if path == "/t/command" || path == "/t/failover" {
			method = http.MethodPost
		}
		resp, err := s.App.Test(httptest.NewRequest(method, path, nil))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != want {
			t.Errorf("%s %s: %d with Retry-After %q, want 503 with Retry-After %q", method, path, resp.StatusCode,
				resp.Header.Get("Retry-After"), want)
		}
	}
}

// TestSameKeyRetryAfter503IsNotChargedAgain: a write answered 503 gives its
// rate-limit unit back, so its retry with the same Idempotency-Key (and
// body) is charged once, when it is answered: with a money budget of one a
// minute, a 503 then its retry is 503 then 201, not 503 then 429. A write
// that was answered still spends its unit.
func TestSameKeyRetryAfter503IsNotChargedAgain(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{Money: 1}, time.Now), prometheus.NewRegistry(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	answered := map[string]bool{}
	s.Root().Post("/send", ratelimit.Money, "a command", func(c *fiber.Ctx) error {
		key := c.Get(server.HeaderIdempotencyKey)
		if !answered[key] {
			answered[key] = true // the first attempt times out
			return apierr.Unavailable()
		}
		return c.Status(http.StatusCreated).JSON(map[string]string{"id": key})
	})
	s.Finish()
	send := func(key string) *http.Response {
		req := httptest.NewRequest(http.MethodPost, "/send", strings.NewReader(`{"amount":5}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(server.HeaderIdempotencyKey, key)
		resp, err := s.App.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for i, want := range []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusCreated} {
		resp := send("k1")
		if resp.StatusCode != want {
			t.Fatalf("attempt %d of key k1: %d (RateLimit-Remaining %s), want %d", i+1, resp.StatusCode,
				resp.Header.Get("RateLimit-Remaining"), want)
		}
		if want == http.StatusServiceUnavailable && resp.Header.Get("RateLimit-Remaining") != "1" {
			t.Errorf("attempt %d: a refunded 503 shows RateLimit-Remaining %q, want 1", i+1, resp.Header.Get("RateLimit-Remaining"))
		}
		// Later attempts are answered; only the first times out.
		if i == 0 {
			answered["k1"] = false
		}
	}
	// The answered command spent the minute's one unit.
	answered["k2"] = true
	if resp := send("k2"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second command in the minute: %d, want 429", resp.StatusCode)
	}
}
