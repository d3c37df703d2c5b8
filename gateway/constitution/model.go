package constitution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fintech/platform/schemas"
)

// ModelConfig configures the OpenAI-compatible advisor.
type ModelConfig struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1 (the client
	// posts to BaseURL + "/chat/completions").
	BaseURL string
	APIKey  string
	Model   string
	// Timeout bounds one call, connection and answer included.
	Timeout time.Duration
}

// ModelAdvisor asks an OpenAI-compatible chat-completions endpoint and
// validates its JSON; when the endpoint fails, hangs past the timeout or
// answers anything but valid suggestions, the built-in advisor answers with
// Source builtin-fallback.
type ModelAdvisor struct {
	client   *openai.Client
	cfg      ModelConfig
	fallback Advisor
	log      *slog.Logger
}

var _ Advisor = (*ModelAdvisor)(nil)

// NewModelAdvisor builds the advisor.
func NewModelAdvisor(cfg ModelConfig, log *slog.Logger) (*ModelAdvisor, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("AI_API_URL and AI_MODEL are both required for the AI endpoint")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if log == nil {
		return nil, errors.New("model advisor: nil logger")
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	return &ModelAdvisor{client: openai.NewClientWithConfig(oc), cfg: cfg, fallback: Builtin{}, log: log}, nil
}

const systemPrompt = `You advise on a constitution scenario. It has eight integer sliders from 0 to 100:
%s.
Six metrics are computed from them: %s. Lower is better for eliteFear, intraConflict and resentment; higher is better for innovation, stability and legitimacy.
Each slider pushes each metric by the number of points given here when it goes from 0 to 100:
%s
Answer with one JSON object and nothing else, of the form
{"suggestions":[{"slider":"<one of the slider keys>","delta":<non-zero integer>,"reason":"<one sentence, at most 300 characters>"}]}
with at most 8 suggestions, each slider at most once, and slider + delta within 0..100.`

func promptPushes() string {
	var b strings.Builder
	for i, k := range schemas.SliderKeys {
		b.WriteString(k + ":")
		for m, mk := range schemas.MetricKeys {
			fmt.Fprintf(&b, " %s %+d", mk, pushes[i][m])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Advise asks the model and validates its answer.
func (a *ModelAdvisor) Advise(ctx context.Context, req AdviceRequest) Advice {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	goal := req.Goal
	if goal == "" {
		goal = req.Template.Goal
	}
	task := req.Template.Instruction
	if goal != "" {
		task = "Improve the metric " + goal + " as much as possible."
	}
	if task == "" {
		task = templates[0].Instruction
	}
	current, _ := json.Marshal(req.Sliders)
	resp, err := a.client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: a.cfg.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: fmt.Sprintf(systemPrompt,
				strings.Join(schemas.SliderKeys, ", "), strings.Join(schemas.MetricKeys, ", "), promptPushes())},
			{Role: openai.ChatMessageRoleUser, Content: task + "\nCurrent sliders: " + string(current)},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
		MaxTokens:      800,
	})
	if err != nil {
		why := "model_error"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			why = "model_timeout"
		}
		a.log.WarnContext(ctx, "ai endpoint failed; built-in advisor answers", "reason", why, "err", err)
		return a.fallbackAdvice(req, why)
	}
	if len(resp.Choices) == 0 {
		return a.fallbackAdvice(req, "model_invalid_response")
	}
	sug, err := ParseModelSuggestions(resp.Choices[0].Message.Content, req.Sliders)
	if err != nil {
		a.log.WarnContext(ctx, "ai endpoint answered invalid suggestions; built-in advisor answers", "err", err)
		return a.fallbackAdvice(req, "model_invalid_response")
	}
	return Advice{Suggestions: sug, Source: SourceModel}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func (a *ModelAdvisor) fallbackAdvice(req AdviceRequest, why string) Advice {
	adv := a.fallback.Advise(context.Background(), req)
	adv.Source, adv.FallbackReason = SourceFallback, why
	return adv
}

// maxModelSuggestions and maxReasonLen bound what a model may answer.
const (
	maxModelSuggestions = 8
	maxReasonLen        = 500
)

// ParseModelSuggestions validates a model's answer against the schema: a
// JSON object (optionally inside a ``` fence) with "suggestions", each a
// known slider at most once, a non-zero integer delta keeping the slider
// within 0..100, and a non-empty reason of at most 500 characters.
func ParseModelSuggestions(content string, s schemas.Sliders) ([]Suggestion, error) {
	content = strings.TrimSpace(content)
	if strings.HasPrefix(content, "```") {
		content = strings.TrimPrefix(content, "```json")
		content = strings.TrimPrefix(content, "```")
		content = strings.TrimSuffix(strings.TrimSpace(content), "```")
	}
	var raw struct {
		Suggestions []struct {
			Slider string          `json:"slider"`
			Delta  json.RawMessage `json:"delta"`
			Reason string          `json:"reason"`
		} `json:"suggestions"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(content)))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not the JSON object asked for: %w", err)
	}
	if raw.Suggestions == nil {
		return nil, errors.New(`no "suggestions" array`)
	}
	if len(raw.Suggestions) > maxModelSuggestions {
		return nil, fmt.Errorf("%d suggestions, at most %d", len(raw.Suggestions), maxModelSuggestions)
	}
	v := s.Values()
	seen := map[string]bool{}
	out := make([]Suggestion, 0, len(raw.Suggestions))
	for n, x := range raw.Suggestions {
		i := sliderIndex(x.Slider)
		if i < 0 || seen[x.Slider] {
			return nil, fmt.Errorf("suggestion %d: unknown or repeated slider %q", n, x.Slider)
		}
		seen[x.Slider] = true
		var d int
		if err := json.Unmarshal(x.Delta, &d); err != nil || d == 0 || v[i]+d < 0 || v[i]+d > 100 {
			return nil, fmt.Errorf("suggestion %d: delta %s is not a non-zero integer keeping %s within 0..100", n, x.Delta, x.Slider)
		}
		r := strings.TrimSpace(x.Reason)
		if r == "" || !utf8.ValidString(r) || strings.ContainsRune(r, 0) || utf8.RuneCountInString(r) > maxReasonLen {
			return nil, fmt.Errorf("suggestion %d: reason missing, too long or not text", n)
		}
		out = append(out, Suggestion{Slider: x.Slider, Delta: d, Reason: r})
	}
	return out, nil
}
