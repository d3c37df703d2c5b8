package constitution

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
)

type aiRequest struct {
	Sliders    sliderInput `json:"sliders"`
	Goal       string      `json:"goal"`
	TemplateID string      `json:"templateId"`
}

type aiResponse struct {
	Suggestions     []Suggestion `json:"suggestions"`
	Predicted       Outcome      `json:"predicted"`
	Current         Outcome      `json:"current"`
	Goal            *string      `json:"goal"`
	TemplateID      *string      `json:"templateId"`
	Source          string       `json:"source"`
	FallbackReason  string       `json:"fallbackReason,omitempty"`
	AIRequestsUsed  int64        `json:"aiRequestsUsed"`
	AIRequestsLimit int64        `json:"aiRequestsLimit"`
}

// aiCall is a validated AI request that has been counted.
type aiCall struct {
	req  AdviceRequest
	goal string
	tmpl string
	used int64
}

// prepareAI validates the body (422), the template (404), and counts the
// request against the caller's monthly limit (402), in that order.
func (h *Handlers) prepareAI(c *fiber.Ctx) (aiCall, error) {
	var req aiRequest
	if err := bind.JSON(c, &req); err != nil {
		return aiCall{}, err
	}
	var v bind.Validator
	sliders := parseSliders(&v, "sliders", req.Sliders)
	goal := cleanText(&v, "goal", req.Goal, 64, false)
	if goal != "" {
		v.OneOf("goal", goal, schemas.MetricKeys...)
	}
	tmplID := cleanText(&v, "templateId", req.TemplateID, bind.MaxTitle, false)
	if err := v.Err(); err != nil {
		return aiCall{}, err
	}
	var tmpl template
	if tmplID != "" {
		t, ok := templateByID(tmplID)
		if !ok {
			return aiCall{}, apierr.TemplateNotFound()
		}
		tmpl = t
	}
	now := h.d.Now()
	used, ok, err := h.d.Usage.TakeAIRequest(c.UserContext(), caller(c), now, h.d.AILimit)
	if err != nil {
		return aiCall{}, err
	}
	if !ok {
		return aiCall{}, apierr.SpendLimitExceeded().With(map[string]any{
			"aiRequestsUsed": used, "aiRequestsLimit": h.d.AILimit, "periodEnd": timestamp(periodEnd(now)),
		})
	}
	return aiCall{req: AdviceRequest{Sliders: sliders, Goal: goal, Template: tmpl}, goal: goal, tmpl: tmplID, used: used}, nil
}

// answer runs the advisor and computes the predicted outcome of its
// suggestions.
func (h *Handlers) answer(ctx context.Context, call aiCall) aiResponse {
	adv := h.d.Advisor.Advise(ctx, call.req)
	if adv.Suggestions == nil {
		adv.Suggestions = []Suggestion{}
	}
	resp := aiResponse{
		Suggestions: adv.Suggestions,
		Predicted:   Evaluate(apply(call.req.Sliders, adv.Suggestions)),
		Current:     Evaluate(call.req.Sliders),
		Source:      adv.Source, FallbackReason: adv.FallbackReason,
		AIRequestsUsed: call.used, AIRequestsLimit: h.d.AILimit,
	}
	if call.goal != "" {
		resp.Goal = &call.goal
	} else if call.req.Template.Goal != "" {
		resp.Goal = &call.req.Template.Goal
	}
	if call.tmpl != "" {
		resp.TemplateID = &call.tmpl
	}
	return resp
}

// aiSuggest answers 200 with suggestions and the predicted regime and
// metrics after applying them.
func (h *Handlers) aiSuggest(c *fiber.Ctx) error {
	call, err := h.prepareAI(c)
	if err != nil {
		return err
	}
	return c.JSON(h.answer(c.UserContext(), call))
}

// aiSuggestStream answers the same as aiSuggest as server-sent events: a
// progress event per stage, then one result event, each flushed as it is
// written. Errors found before streaming starts are ordinary JSON errors.
func (h *Handlers) aiSuggestStream(c *fiber.Ctx) error {
	call, err := h.prepareAI(c)
	if err != nil {
		return err
	}
	source := SourceBuiltin
	if _, ok := h.d.Advisor.(*ModelAdvisor); ok {
		source = SourceModel
	}
	timeout := h.d.AITimeout + 5*time.Second
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		send := func(event string, data any) bool {
			raw, err := json.Marshal(data)
			if err != nil {
				return false
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw); err != nil {
				return false
			}
			return w.Flush() == nil
		}
		current := Evaluate(call.req.Sliders)
		if !send("progress", map[string]any{"stage": "accepted", "step": 1, "of": 3, "current": current}) {
			return
		}
		if !send("progress", map[string]any{"stage": "advising", "step": 2, "of": 3, "source": source}) {
			return
		}
		resp := h.answer(ctx, call)
		if !send("progress", map[string]any{"stage": "predicted", "step": 3, "of": 3, "suggestions": len(resp.Suggestions)}) {
			return
		}
		send("result", resp)
	})
	return nil
}

type planResponse struct {
	Plan            string `json:"plan"`
	AIRequestsUsed  int64  `json:"aiRequestsUsed"`
	AIRequestsLimit int64  `json:"aiRequestsLimit"`
	PeriodStart     string `json:"periodStart"`
	PeriodEnd       string `json:"periodEnd"`
	Advisor         string `json:"advisor"`
}

// plan answers the caller's AI plan and this calendar month's usage.
func (h *Handlers) plan(c *fiber.Ctx) error {
	now := h.d.Now()
	used, err := h.d.Usage.AIUsage(c.UserContext(), caller(c), now)
	if err != nil {
		return err
	}
	advisor := SourceBuiltin
	if _, ok := h.d.Advisor.(*ModelAdvisor); ok {
		advisor = SourceModel
	}
	return c.JSON(planResponse{Plan: "standard", AIRequestsUsed: used, AIRequestsLimit: h.d.AILimit,
		PeriodStart: timestamp(store.PeriodStart(now)), PeriodEnd: timestamp(periodEnd(now)), Advisor: advisor})
}

// periodEnd is the first instant of the next calendar month (UTC), when the
// monthly AI counter starts again.
func periodEnd(now time.Time) time.Time {
	return store.PeriodStart(now).AddDate(0, 1, 0)
}
