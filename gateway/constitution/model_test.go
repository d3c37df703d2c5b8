package constitution

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fintech/platform/gateway/constitution/aiclient"
)

// fakeChat answers as the endpoint client would: content, or err. The HTTP
// side (status codes, timeouts, the wire format) is aiclient's, tested there
// against a local server.
type fakeChat struct {
	content string
	err     error
	calls   atomic.Int32
	user    atomic.Value
}

func (f *fakeChat) CompleteJSON(_ context.Context, system, user string) (string, error) {
	f.calls.Add(1)
	f.user.Store(user)
	if !strings.Contains(system, "eliteFear") {
		return "", errors.New("the system prompt does not name the metrics")
	}
	return f.content, f.err
}

func TestModelAdvisor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		content    string
		err        error
		wantSource string
		wantReason string
		wantFirst  Suggestion
	}{
		{"valid answer", `{"suggestions":[{"slider":"transparency","delta":20,"reason":"Open budgets build trust."}]}`, nil,
			SourceModel, "", Suggestion{Slider: "transparency", Delta: 20, Reason: "Open budgets build trust."}},
		{"valid answer in a code fence", "```json\n{\"suggestions\":[{\"slider\":\"floor\",\"delta\":-10,\"reason\":\"x\"}]}\n```", nil,
			SourceModel, "", Suggestion{Slider: "floor", Delta: -10, Reason: "x"}},
		{"garbage", `I think you should raise transparency!`, nil, SourceFallback, "model_invalid_response", Suggestion{}},
		{"unknown slider", `{"suggestions":[{"slider":"army","delta":10,"reason":"x"}]}`, nil, SourceFallback, "model_invalid_response", Suggestion{}},
		{"out of range", `{"suggestions":[{"slider":"floor","delta":60,"reason":"x"}]}`, nil, SourceFallback, "model_invalid_response", Suggestion{}},
		{"fractional delta", `{"suggestions":[{"slider":"floor","delta":5.5,"reason":"x"}]}`, nil, SourceFallback, "model_invalid_response", Suggestion{}},
		{"zero delta", `{"suggestions":[{"slider":"floor","delta":0,"reason":"x"}]}`, nil, SourceFallback, "model_invalid_response", Suggestion{}},
		{"repeated slider", `{"suggestions":[{"slider":"floor","delta":5,"reason":"x"},{"slider":"floor","delta":5,"reason":"y"}]}`, nil, SourceFallback, "model_invalid_response", Suggestion{}},
		{"no answer", ``, aiclient.ErrNoAnswer, SourceFallback, "model_invalid_response", Suggestion{}},
		{"server error", ``, errors.New("ai endpoint: 500 boom"), SourceFallback, "model_error", Suggestion{}},
		{"hangs past the timeout", ``, fmt.Errorf("%w: context deadline exceeded", aiclient.ErrTimeout), SourceFallback, "model_timeout", Suggestion{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := &fakeChat{content: tt.content, err: tt.err}
			adv, err := newModelAdvisor(fake, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			got := adv.Advise(context.Background(), AdviceRequest{Sliders: all(50), Goal: "legitimacy"})
			if fake.calls.Load() != 1 {
				t.Fatalf("the endpoint was called %d times, want 1", fake.calls.Load())
			}
			if u, _ := fake.user.Load().(string); !strings.Contains(u, `"ruleOfLaw":50`) || !strings.Contains(u, "legitimacy") {
				t.Fatalf("user message %q lacks the sliders or the goal", u)
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
