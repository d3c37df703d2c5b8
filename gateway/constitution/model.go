package constitution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/fintech/platform/gateway/constitution/aiclient"
	"github.com/fintech/platform/schemas"
)

// ModelConfig configures the OpenAI-compatible endpoint.
type ModelConfig = aiclient.Config

// chat is the endpoint as the advisor uses it (aiclient.Client).
type chat interface {
	CompleteJSON(ctx context.Context, system, user string) (string, error)
}

// ModelAdvisor asks an OpenAI-compatible chat-completions endpoint and
// validates its JSON; when the endpoint fails, hangs past the timeout or
// answers anything but valid suggestions, the built-in advisor answers with
// Source builtin-fallback.
type ModelAdvisor struct {
	chat     chat
	fallback Advisor
	log      *slog.Logger
}

var _ Advisor = (*ModelAdvisor)(nil)

// NewModelAdvisor builds the advisor on the endpoint cfg names.
func NewModelAdvisor(cfg ModelConfig, log *slog.Logger) (*ModelAdvisor, error) {
	c, err := aiclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return newModelAdvisor(c, log)
}

func newModelAdvisor(c chat, log *slog.Logger) (*ModelAdvisor, error) {
	if log == nil {
		return nil, errors.New("model advisor: nil logger")
	}
	return &ModelAdvisor{chat: c, fallback: Builtin{}, log: log}, nil
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
	content, err := a.chat.CompleteJSON(ctx,
		fmt.Sprintf(systemPrompt, strings.Join(schemas.SliderKeys, ", "), strings.Join(schemas.MetricKeys, ", "), promptPushes()),
		task+"\nCurrent sliders: "+string(current))
	switch {
	case errors.Is(err, aiclient.ErrNoAnswer):
		return a.fallbackAdvice(req, "model_invalid_response")
	case err != nil:
		why := "model_error"
		if errors.Is(err, aiclient.ErrTimeout) {
			why = "model_timeout"
		}
		a.log.WarnContext(ctx, "ai endpoint failed; built-in advisor answers", "reason", why, "err", err)
		return a.fallbackAdvice(req, why)
	}
	sug, err := ParseModelSuggestions(content, req.Sliders)
	if err != nil {
		a.log.WarnContext(ctx, "ai endpoint answered invalid suggestions; built-in advisor answers", "err", err)
		return a.fallbackAdvice(req, "model_invalid_response")
	}
	return Advice{Suggestions: sug, Source: SourceModel}
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
