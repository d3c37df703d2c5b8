package constitution

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeChat is a local server speaking the chat-completions protocol: it
// answers every request with reply (a status and the assistant's content),
// or hangs until the client gives up when hang is set.
func fakeChat(t *testing.T, status int, content string, hang bool) (*httptest.Server, *atomic.Int32) {
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
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || req.Model != "test-model" || len(req.Messages) != 2 ||
			!strings.Contains(req.Messages[1].Content, `"ruleOfLaw":50`) {
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
		resp := map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestModelAdvisor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		content    string
		hang       bool
		wantSource string
		wantReason string
		wantFirst  Suggestion
	}{
		{"valid answer", 200, `{"suggestions":[{"slider":"transparency","delta":20,"reason":"Open budgets build trust."}]}`, false,
			SourceModel, "", Suggestion{Slider: "transparency", Delta: 20, Reason: "Open budgets build trust."}},
		{"valid answer in a code fence", 200, "```json\n{\"suggestions\":[{\"slider\":\"floor\",\"delta\":-10,\"reason\":\"x\"}]}\n```", false,
			SourceModel, "", Suggestion{Slider: "floor", Delta: -10, Reason: "x"}},
		{"garbage", 200, `I think you should raise transparency!`, false, SourceFallback, "model_invalid_response", Suggestion{}},
		{"unknown slider", 200, `{"suggestions":[{"slider":"army","delta":10,"reason":"x"}]}`, false, SourceFallback, "model_invalid_response", Suggestion{}},
		{"out of range", 200, `{"suggestions":[{"slider":"floor","delta":60,"reason":"x"}]}`, false, SourceFallback, "model_invalid_response", Suggestion{}},
		{"fractional delta", 200, `{"suggestions":[{"slider":"floor","delta":5.5,"reason":"x"}]}`, false, SourceFallback, "model_invalid_response", Suggestion{}},
		{"zero delta", 200, `{"suggestions":[{"slider":"floor","delta":0,"reason":"x"}]}`, false, SourceFallback, "model_invalid_response", Suggestion{}},
		{"repeated slider", 200, `{"suggestions":[{"slider":"floor","delta":5,"reason":"x"},{"slider":"floor","delta":5,"reason":"y"}]}`, false, SourceFallback, "model_invalid_response", Suggestion{}},
		{"server error", 500, ``, false, SourceFallback, "model_error", Suggestion{}},
		{"hangs past the timeout", 200, ``, true, SourceFallback, "model_timeout", Suggestion{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, calls := fakeChat(t, tt.status, tt.content, tt.hang)
			adv, err := NewModelAdvisor(ModelConfig{BaseURL: srv.URL + "/v1", APIKey: "test-key", Model: "test-model", Timeout: 700 * time.Millisecond},
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got := adv.Advise(context.Background(), AdviceRequest{Sliders: all(50), Goal: "legitimacy"})
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v: the timeout does not bound the call", d)
			}
			if calls.Load() < 1 {
				t.Fatal("the fake endpoint was not called")
			}
			if got.Source != tt.wantSource || got.FallbackReason != tt.wantReason {
				t.Fatalf("source %q reason %q, want %q %q", got.Source, got.FallbackReason, tt.wantSource, tt.wantReason)
			}
			if tt.wantSource == SourceModel {
				if len(got.Suggestions) != 1 || got.Suggestions[0] != tt.wantFirst {
					t.Fatalf("suggestions %+v", got.Suggestions)
				}
				return
			}
			// The fallback is the built-in advisor's answer.
			want := Builtin{}.Advise(context.Background(), AdviceRequest{Sliders: all(50), Goal: "legitimacy"})
			if len(got.Suggestions) == 0 || len(got.Suggestions) != len(want.Suggestions) || got.Suggestions[0] != want.Suggestions[0] {
				t.Fatalf("fallback suggestions %+v, want %+v", got.Suggestions, want.Suggestions)
			}
		})
	}
}
