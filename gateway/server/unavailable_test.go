package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

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
