package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// fakeChatCompletions is a local OpenAI-compatible endpoint. What it answers
// depends on the goal named in the user's message: legitimacy → a valid
// suggestion, innovation → prose instead of JSON, eliteFear → HTTP 500,
// stability → no answer until the client gives up.
func fakeChatCompletions(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer fake-key" {
			http.Error(w, "unexpected", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		user := ""
		if len(req.Messages) > 0 {
			user = req.Messages[len(req.Messages)-1].Content
		}
		content := `{"suggestions":[{"slider":"transparency","delta":10,"reason":"Open budgets raise trust."}]}`
		switch {
		case strings.Contains(user, "stability"):
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		case strings.Contains(user, "eliteFear"):
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
			return
		case strings.Contains(user, "innovation"):
			content = "Sure! You should raise innovation a lot."
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-e2e", "object": "chat.completion", "created": time.Now().Unix(), "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestConstitutionAIModelAndMonthlyLimit runs a platform configured with an
// OpenAI-compatible endpoint (a local fake) and a monthly limit of 5.
func TestConstitutionAIModelAndMonthlyLimit(t *testing.T) {
	fake := fakeChatCompletions(t)
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"AI_API_URL": fake.URL + "/v1", "AI_API_KEY": "fake-key", "AI_MODEL": "fake-model",
		"AI_MONTHLY_LIMIT": "5", "AI_TIMEOUT": "1s",
	}})
	sliders := sliderBody([8]int{50, 50, 50, 50, 50, 50, 50, 50})

	t.Run("model answers, garbage, 500 and timeout fall back", func(t *testing.T) {
		u := p.Register(t, "con-model")
		cases := []struct{ goal, source, reason string }{
			{"legitimacy", "model", ""},
			{"innovation", "builtin-fallback", "model_invalid_response"},
			{"eliteFear", "builtin-fallback", "model_error"},
			{"stability", "builtin-fallback", "model_timeout"},
		}
		for _, c := range cases {
			start := time.Now()
			r := p.Post(t, "/api/constitution/ai-suggest", u.Token, map[string]any{"sliders": sliders, "goal": c.goal})
			if r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", c.goal, r.Status, r.Body)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Fatalf("%s took %v: not bounded by AI_TIMEOUT", c.goal, d)
			}
			var ai conAI
			r.Decode(t, &ai)
			if ai.Source != c.source || ai.FallbackReason != c.reason || len(ai.Suggestions) == 0 {
				t.Fatalf("%s: %+v", c.goal, ai)
			}
			if c.source == "model" && (ai.Suggestions[0].Slider != "transparency" || ai.Suggestions[0].Delta != 10 ||
				ai.Predicted.Metrics["legitimacy"] <= ai.Current.Metrics["legitimacy"]) {
				t.Fatalf("model answer %+v", ai)
			}
		}
		var plan map[string]any
		p.Get(t, "/api/constitution/me/plan", u.Token).Decode(t, &plan)
		if plan["aiRequestsUsed"] != float64(4) || plan["aiRequestsLimit"] != float64(5) || plan["advisor"] != "model" {
			t.Fatalf("plan %v", plan)
		}
	})

	t.Run("stream flushes progress before the slow answer", func(t *testing.T) {
		u := p.Register(t, "con-flush")
		raw, _ := json.Marshal(map[string]any{"sliders": sliders, "goal": "stability"}) // the fake hangs: 1 s timeout
		req, _ := http.NewRequest(http.MethodPost, p.BaseURL+"/api/constitution/ai-suggest-stream", strings.NewReader(string(raw)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+u.Token)
		start := time.Now()
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		var firstAt, resultAt time.Duration
		var result string
		event := ""
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				break
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
				if firstAt == 0 {
					firstAt = time.Since(start)
				}
			case strings.HasPrefix(line, "data: ") && event == "result":
				result, resultAt = strings.TrimPrefix(line, "data: "), time.Since(start)
			}
		}
		if firstAt == 0 || resultAt == 0 {
			t.Fatalf("stream incomplete: first %v result %v", firstAt, resultAt)
		}
		// The answer waits for the 1 s model timeout; the first progress
		// event must not.
		if resultAt < 900*time.Millisecond || firstAt > resultAt-500*time.Millisecond {
			t.Fatalf("first event at %v, result at %v: progress was not flushed ahead", firstAt, resultAt)
		}
		var ai conAI
		if err := json.Unmarshal([]byte(result), &ai); err != nil || ai.Source != "builtin-fallback" || ai.FallbackReason != "model_timeout" {
			t.Fatalf("result %s", result)
		}
	})

	t.Run("20 concurrent requests, limit 5", func(t *testing.T) {
		u := p.Register(t, "con-limit")
		client := &http.Client{Timeout: 30 * time.Second}
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		bodies := make([][]byte, 20)
		errs := make([]error, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Half of them stream; the cap counts both endpoints.
				path := "/api/constitution/ai-suggest"
				if i%2 == 1 {
					path = "/api-backend/api/constitution/ai-suggest-stream"
				}
				statuses[i], bodies[i], errs[i] = rawPost(client, p.BaseURL+path, u.Token, map[string]any{"sliders": sliders, "goal": "legitimacy"})
			}()
		}
		wg.Wait()
		ok, limited := 0, 0
		for i, s := range statuses {
			if errs[i] != nil {
				t.Fatalf("request %d: %v", i, errs[i])
			}
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusPaymentRequired:
				var e map[string]any
				if json.Unmarshal(bodies[i], &e) != nil || e["error"] != "spend_limit_exceeded" {
					t.Fatalf("402 body %s", bodies[i])
				}
				limited++
			default:
				t.Fatalf("request %d: %d %s", i, s, bodies[i])
			}
		}
		if ok != 5 || limited != 15 {
			t.Fatalf("%d successes and %d refusals, want exactly 5 and 15", ok, limited)
		}
		var plan map[string]any
		p.Get(t, "/api/constitution/me/plan", u.Token).Decode(t, &plan)
		if plan["aiRequestsUsed"] != float64(5) {
			t.Fatalf("plan %v", plan)
		}
		wantError(t, p.Post(t, "/api/constitution/ai-suggest", u.Token, map[string]any{"sliders": sliders}), http.StatusPaymentRequired, "spend_limit_exceeded")
	})
}
