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
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
)

// aiRequest is the body of ai-suggest and ai-suggest-stream.
type aiRequest struct {
	Sliders    sliderInput `json:"sliders" required:"true"`
	Goal       string      `json:"goal" enum:"eliteFear,intraConflict,resentment,innovation,stability,legitimacy" description:"the metric to improve; absent: the template's goal, else the overall score"`
	TemplateID string      `json:"templateId" maxLength:"200" description:"a template id from GET public/presets (aiTemplates)"`

	sliders schemas.Sliders
	goal    string
	tmplID  string
}

// Validate checks the sliders, the goal and the template id's text (an
// unknown template is 404, found by the handler).
func (r *aiRequest) Validate() error {
	var v bind.Validator
	r.sliders = parseSliders(&v, "sliders", r.Sliders)
	r.goal = cleanText(&v, "goal", r.Goal, 64, false) // one of the metrics: its enum tag
	r.tmplID = cleanText(&v, "templateId", r.TemplateID, bind.MaxTitle, false)
	return v.Err()
}

// aiCall is a validated AI request that has been counted.
type aiCall struct {
	req  AdviceRequest
	goal string
	tmpl string
	used int64
	// builtinOnly: the global AI budget is past its level, so the
	// built-in advisor answers instead of the model.
	builtinOnly bool
}

// prepareAI looks the template up (404) and counts the request against the
// per-IP and global AI budget (429) and the caller's monthly limit (402), in
// that order; the body was validated (422)
// before.
func (h *Handlers) prepareAI(c *fiber.Ctx, req *aiRequest) (aiCall, error) {
	var tmpl template
	if req.tmplID != "" {
		t, ok := templateByID(req.tmplID)
		if !ok {
			return aiCall{}, apierr.TemplateNotFound()
		}
		tmpl = t
	}
	// The per-IP and global budget first: a request it refuses leaves the
	// caller's monthly count alone, and one the monthly count refuses
	// gives its unit back. Past the global level the built-in advisor
	// answers (it costs nothing) instead of anyone being refused.
	var ticket *ratelimit.Ticket
	if h.cfg.Budgets != nil {
		var err error
		if ticket, err = h.cfg.Budgets.Take(c, schemas.BudgetAI, ""); err != nil {
			return aiCall{}, err
		}
	}
	now := h.now()
	used, ok, err := h.usage.TakeAIRequest(c.UserContext(), caller(c), now, h.cfg.AILimit)
	if err != nil || !ok {
		ticket.Refund(c.UserContext())
	}
	if err != nil {
		return aiCall{}, err
	}
	if !ok {
		return aiCall{}, apierr.SpendLimitExceeded().With(map[string]any{
			"aiRequestsUsed": used, "aiRequestsLimit": h.cfg.AILimit, "periodEnd": timestamp(periodEnd(now)),
		})
	}
	return aiCall{req: AdviceRequest{Sliders: req.sliders, Goal: req.goal, Template: tmpl}, goal: req.goal, tmpl: req.tmplID, used: used,
		builtinOnly: ticket.OverGlobal()}, nil
}

// answer runs the advisor and computes the predicted outcome of its
// suggestions.
func (h *Handlers) answer(ctx context.Context, call aiCall) schemas.ConstitutionAdvice {
	var adv Advice
	if m, model := h.advisor.(*ModelAdvisor); model && call.builtinOnly {
		adv = m.fallbackAdvice(call.req, "budget_exhausted")
	} else {
		adv = h.advisor.Advise(ctx, call.req)
	}
	if adv.Suggestions == nil {
		adv.Suggestions = []Suggestion{}
	}
	resp := schemas.ConstitutionAdvice{
		Suggestions: adv.Suggestions,
		Predicted:   Evaluate(apply(call.req.Sliders, adv.Suggestions)),
		Current:     Evaluate(call.req.Sliders),
		Source:      adv.Source, FallbackReason: adv.FallbackReason,
		AIRequestsUsed: call.used, AIRequestsLimit: h.cfg.AILimit,
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
func (h *Handlers) aiSuggest(c *fiber.Ctx, req *aiRequest) error {
	call, err := h.prepareAI(c, req)
	if err != nil {
		return err
	}
	return c.JSON(h.answer(c.UserContext(), call))
}

// aiSuggestStream answers the same as aiSuggest as server-sent events: a
// progress event per stage, then one result event, each flushed as it is
// written. Errors found before streaming starts are ordinary JSON errors.
func (h *Handlers) aiSuggestStream(c *fiber.Ctx, req *aiRequest) error {
	call, err := h.prepareAI(c, req)
	if err != nil {
		return err
	}
	source := SourceBuiltin
	if _, ok := h.advisor.(*ModelAdvisor); ok {
		source = SourceModel
	}
	timeout := h.cfg.AITimeout + 5*time.Second
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
		if !send("progress", schemas.ConstitutionAdviceProgress{Stage: "accepted", Step: 1, Of: 3, Current: &current}) {
			return
		}
		if !send("progress", schemas.ConstitutionAdviceProgress{Stage: "advising", Step: 2, Of: 3, Source: source}) {
			return
		}
		resp := h.answer(ctx, call)
		n := len(resp.Suggestions)
		if !send("progress", schemas.ConstitutionAdviceProgress{Stage: "predicted", Step: 3, Of: 3, Suggestions: &n}) {
			return
		}
		send("result", resp)
	})
	return nil
}

// plan answers the caller's AI plan and this calendar month's usage.
func (h *Handlers) plan(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now()
	used, err := h.usage.AIUsage(c.UserContext(), caller(c), now)
	if err != nil {
		return err
	}
	advisor := SourceBuiltin
	if _, ok := h.advisor.(*ModelAdvisor); ok {
		advisor = SourceModel
	}
	return c.JSON(schemas.ConstitutionPlan{Plan: "standard", AIRequestsUsed: used, AIRequestsLimit: h.cfg.AILimit,
		PeriodStart: timestamp(store.PeriodStart(now)), PeriodEnd: timestamp(periodEnd(now)), Advisor: advisor})
}

// periodEnd is the first instant of the next calendar month (UTC), when the
// monthly AI counter starts again.
func periodEnd(now time.Time) time.Time {
	return store.PeriodStart(now).AddDate(0, 1, 0)
}
