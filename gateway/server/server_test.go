package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestWrongMethodIs405WithAllow: a known path asked with a method it does
// not serve answers 405 method_not_allowed with Allow; an unknown path 404
// not_found; both in the one error envelope.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	s := server.New(ratelimit.New(ratelimit.Limits{}, time.Now), prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := s.Root().Group("/t")
	g.Post("/items/:id", ratelimit.Write, "writes", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusOK) })
	g.Handle(http.MethodDelete, "/items/:id", ratelimit.Write, "deletes", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	s.Finish()
	tests := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{http.MethodGet, "/t/items/x", http.StatusMethodNotAllowed, "method_not_allowed", "POST, DELETE"},
		{http.MethodPut, "/t/items/x", http.StatusMethodNotAllowed, "method_not_allowed", "POST, DELETE"},
		{http.MethodGet, "/t/nothing", http.StatusNotFound, "not_found", ""},
		{http.MethodDelete, "/t/items/x", http.StatusNoContent, "", ""},
	}
	for _, tt := range tests {
		resp, err := s.App.Test(httptest.NewRequest(tt.method, tt.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != tt.status || (tt.code != "" && body["error"] != tt.code) ||
			resp.Header.Get("Allow") != tt.allow || (tt.code != "" && body["message"] == nil) {
			t.Errorf("%s %s: %d %v Allow %q", tt.method, tt.path, resp.StatusCode, body, resp.Header.Get("Allow"))
		}
		if tt.allow != "" && !strings.Contains(fmt.Sprint(body["message"]), tt.allow) {
			t.Errorf("%s %s: the message %q does not name the allowed methods", tt.method, tt.path, body["message"])
		}
	}
}
