package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
)

// TestPanicIsAnInternalErrorNotACrash: a handler's panic answers 500
// internal with the request id, and the server goes on serving.
func TestPanicIsAnInternalErrorNotACrash(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := s.Root().Group("/t")
	g.Get("/boom", "panics", func(*fiber.Ctx) error {
		var m map[string]int
		m["x"] = 1 // assignment to a nil map
		return nil
	})
	g.Get("/ok", "answers", func(c *fiber.Ctx) error { return c.SendString("ok") })
	s.Finish()

	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, "/t/boom", nil))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusInternalServerError || body["error"] != "internal" ||
		body["requestId"] == nil || body["requestId"] != resp.Header.Get(server.HeaderRequestID) {
		t.Fatalf("panic answered %d %v", resp.StatusCode, body)
	}
	resp, err = s.App.Test(httptest.NewRequest(http.MethodGet, "/t/ok", nil))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after the panic: %v %v", resp, err)
	}
}

// TestCommandRuleIsValidationFailed: a command's own Validate (schemas)
// returned by a handler is answered 422 validation_failed with its fields.
func TestCommandRuleIsValidationFailed(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.Root().Get("/append", "appends", func(*fiber.Ctx) error {
		return fmt.Errorf("checking the entry: %w", schemas.LedgerAppend{SourceID: "s"}.Validate())
	})
	s.Finish()
	resp, err := s.App.Test(httptest.NewRequest(http.MethodGet, "/append", nil))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnprocessableEntity || body.Error != "validation_failed" || body.Fields["kind"] != "is required" {
		t.Fatalf("answered %d %+v", resp.StatusCode, body)
	}
}
