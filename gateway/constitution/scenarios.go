package constitution

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// scenarioRequest is the body of scenario creation. regime and metrics may
// be sent (the spec lists them) but are ignored: the server computes both.
type scenarioRequest struct {
	Title   string      `json:"title"`
	Sliders sliderInput `json:"sliders"`
	Tags    []string    `json:"tags"`
}

type scenarioView struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Sliders   schemas.Sliders `json:"sliders"`
	Regime    string          `json:"regime"`
	Metrics   schemas.Metrics `json:"metrics"`
	Tags      []string        `json:"tags"`
	CreatedAt string          `json:"createdAt"`
}

func viewScenario(r store.Record) scenarioView {
	return scenarioView{ID: r.ID, Title: r.Title, Sliders: r.Sliders, Regime: r.Regime, Metrics: r.Metrics,
		Tags: r.Tags, CreatedAt: timestamp(r.CreatedAt)}
}

// createScenario saves a scenario with the computed regime and metrics and
// answers 201 with it.
func (h *Handlers) createScenario(c *fiber.Ctx) error {
	var req scenarioRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	title := cleanText(&v, "title", req.Title, bind.MaxTitle, true)
	sliders := parseSliders(&v, "sliders", req.Sliders)
	tags := cleanTags(&v, req.Tags)
	if err := v.Err(); err != nil {
		return err
	}
	user := caller(c)
	now := h.d.Now().UTC().Truncate(time.Second)
	o := Evaluate(sliders)
	rec := store.Record{ID: schemas.NewID(), UserID: user, Title: title, Sliders: sliders, Regime: o.Regime,
		Metrics: o.Metrics, Tags: tags, CreatedAt: now}
	env, err := schemas.New(schemas.TypeScenarioCreated, user, user, schemas.ScenarioCreated{
		ScenarioID: rec.ID, UserID: user, Title: title, Sliders: sliders, Regime: o.Regime, Metrics: o.Metrics}, now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsConstitution, env)
	if err != nil {
		return err
	}
	if err := h.d.Scenarios.CreateScenario(c.UserContext(), rec, row); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(viewScenario(rec))
}

// listScenarios answers the caller's scenarios, newest first, with limit
// and cursor.
func (h *Handlers) listScenarios(c *fiber.Ctx) error {
	p, err := bind.IDPageQuery(c)
	if err != nil {
		return err
	}
	rows, err := h.d.Scenarios.ListScenarios(c.UserContext(), caller(c), p.After, p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(page(rows, p.Limit, func(r store.Record) string { return r.ID }, viewScenario))
}

// ownedScenario loads a scenario of the caller named in a body; a missing,
// malformed or foreign id is 404 not_found.
func (h *Handlers) ownedScenario(c *fiber.Ctx, id string) (store.Record, error) {
	notFound := apierr.NotFound("no scenario with this id among yours")
	if !schemas.IsID(id) {
		return store.Record{}, notFound
	}
	r, err := h.d.Scenarios.OwnedScenario(c.UserContext(), id, caller(c))
	if errors.Is(err, postgres.ErrNotFound) {
		return store.Record{}, notFound
	}
	return r, err
}

// listResponse is a page of items and the cursor of the next page (null
// when the list is exhausted).
type listResponse[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// page trims a result fetched with limit+1 rows and computes the next cursor.
func page[R, T any](rows []R, limit int, id func(R) string, view func(R) T) listResponse[T] {
	out := listResponse[T]{Items: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		next := bind.Cursor(id(rows[len(rows)-1]))
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, view(r))
	}
	return out
}
