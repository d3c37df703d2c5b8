package aiclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// fakeChat is a local server (127.0.0.1 only) speaking the chat-completions
// protocol: it answers every request with status and the assistant's
// content, without any choice when noChoice is set, or hangs until the
// client gives up when hang is set.
func fakeChat(t *testing.T, status int, content string, noChoice, hang bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			ResponseFormat struct {
				Type string `json:"type"`
			} `json:"response_format"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || req.Model != "test-model" || len(req.Messages) != 2 ||
			req.Messages[0].Role != "system" || req.Messages[0].Content != "the system" ||
			req.Messages[1].Role != "user" || req.Messages[1].Content != "the user" || req.ResponseFormat.Type != "json_object" {
			http.Error(w, "bad request body: "+string(body), http.StatusBadRequest)
			return
		}
		if hang {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
			return
		}
		choices := []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}}
		if noChoice {
			choices = []any{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model", "choices": choices,
		})
	}))
	t.Cleanup(srv.Close)
	if host, _, _ := net.SplitHostPort(srv.Listener.Addr().String()); !net.ParseIP(host).IsLoopback() {
		t.Fatalf("the fake endpoint listens on %s: tests talk to loopback only", host)
	}
	return srv, &calls
}

func TestCompleteJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		content  string
		noChoice bool
		hang     bool
		want     string
		wantErr  error // nil: success; errAny: an error that is neither sentinel
	}{
		{"answer", 200, `{"suggestions":[]}`, false, false, `{"suggestions":[]}`, nil},
		{"answer is returned unchecked", 200, `not json`, false, false, `not json`, nil},
		{"no choice", 200, ``, true, false, "", ErrNoAnswer},
		{"server error", 500, ``, false, false, "", errAny},
		{"hangs past the timeout", 200, ``, false, true, "", ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, calls := fakeChat(t, tt.status, tt.content, tt.noChoice, tt.hang)
			c, err := New(Config{BaseURL: srv.URL + "/v1/", APIKey: "test-key", Model: "test-model", Timeout: 700 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got, err := c.CompleteJSON(context.Background(), "the system", "the user")
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v: the timeout does not bound the call", d)
			}
			if calls.Load() != 1 {
				t.Fatalf("the fake endpoint was called %d times, want 1", calls.Load())
			}
			switch {
			case tt.wantErr == nil && (err != nil || got != tt.want):
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			case tt.wantErr == errAny && (err == nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrNoAnswer)):
				t.Fatalf("err %v, want the endpoint's own error", err)
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
		})
	}
}

var errAny = errors.New("any other error")

func TestNewNeedsURLAndModel(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Model: "m"}, {BaseURL: "http://127.0.0.1:1/v1"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted a config without URL or model", cfg)
		}
	}
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil || c.Timeout() != DefaultTimeout {
		t.Fatalf("default timeout: %v %v", c, err)
	}
}
