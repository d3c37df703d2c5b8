package server_test

import (
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

// TestPostgresFailoverAnswers503: a request whose Postgres read meets a
// failover (a terminated connection, a read-only server, no server at all)
// is answered 503 unavailable, which the client retries; a failure of the
// statement itself stays 500.
func TestPostgresFailoverAnswers503(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"terminated", fmt.Errorf("read wallet: %w", &pgconn.PgError{Code: "57P01"}), http.StatusServiceUnavailable},
		{"read-only", &pgconn.PgError{Code: "25006"}, http.StatusServiceUnavailable},
		{"no server", &pgconn.ConnectError{}, http.StatusServiceUnavailable},
		{"broken", fmt.Errorf("read wallet: %w", io.ErrUnexpectedEOF), http.StatusServiceUnavailable},
		{"data error", &pgconn.PgError{Code: "22003"}, http.StatusInternalServerError},
	}
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for i, tt := range tests {
		err := tt.err
		s.Root().Get(fmt.Sprintf("/t/%d", i), tt.name, func(*fiber.Ctx) error { return err })
	}
	s.Finish()
	for i, tt := range tests {
		resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, fmt.Sprintf("/t/%d", i), nil))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.want {
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.want)
		}
	}
}
