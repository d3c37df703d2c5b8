// Package servertest builds a server and trivial dependencies for the
// tests of module handlers, such as the OpenAPI tests that build a slice
// from the routes Register really declares.
package servertest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// New returns a server without rate limits that logs nowhere.
func New() *server.Server {
	return server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// Sender answers every command with an empty reply.
type Sender struct{}

// Send answers an empty reply.
func (Sender) Send(context.Context, commands.Command) (schemas.Reply, error) {
	return schemas.Reply{}, nil
}

// DB is a database that always answers.
type DB struct{}

// Ping answers nil.
func (DB) Ping(context.Context) error { return nil }

// Pass is middleware that lets every request through (in place of
// authentication).
func Pass(c *fiber.Ctx) error { return c.Next() }

// Document answers the OpenAPI document s serves at path, decoded: the
// module tests read a slice as a client does.
func Document(t testing.TB, s *server.Server, path string) map[string]any {
	t.Helper()
	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return doc
}
