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
	Title   string      `json:"title" required:"true" maxLength:"200" description:"trimmed; 1 to 200 characters"`
	Sliders sliderInput `json:"sliders" required:"true"`
	Tags    []string    `json:"tags" maxItems:"20" description:"at most 20 tags of 1 to 50 characters; trimmed, duplicates dropped"`
	Regime  ignored     `json:"regime"`
	Metrics ignored     `json:"metrics"`

	title   string
	sliders schemas.Sliders
	tags    []string
}

// Validate checks and cleans the title, sliders and tags.
func (r *scenarioRequest) Validate() error {
	var v bind.Validator
	r.title = cleanText(&v, "title", r.Title, bind.MaxTitle, true)
	r.sliders = parseSliders(&v, "sliders", r.Sliders)
	r.tags = cleanTags(&v, r.Tags)
	return v.Err()
}

// listScenariosRequest is a page of the caller's scenarios.
type listScenariosRequest struct{ bind.TimePaging }

func viewScenario(r store.Record) schemas.ConstitutionScenario {
	return schemas.ConstitutionScenario{ID: r.ID, Title: r.Title, Sliders: r.Sliders, Regime: r.Regime, Metrics: r.Metrics,
		Tags: r.Tags, CreatedAt: timestamp(r.CreatedAt)}
}

// createScenario saves a scenario with the computed regime and metrics and
// answers 201 with it.
func (h *Handlers) createScenario(c *fiber.Ctx, req *scenarioRequest) error {
	user := caller(c)
	now := h.now().UTC().Truncate(time.Second)
	o := Evaluate(req.sliders)
	rec := store.Record{ID: schemas.NewID(), UserID: user, Title: req.title, Sliders: req.sliders, Regime: o.Regime,
		Metrics: o.Metrics, Tags: req.tags, CreatedAt: now}
	env, err := schemas.New(schemas.TypeScenarioCreated, user, user, schemas.ScenarioCreated{
		ScenarioID: rec.ID, UserID: user, Title: rec.Title, Sliders: rec.Sliders, Regime: o.Regime, Metrics: o.Metrics}, now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsConstitution, env)
	if err != nil {
		return err
	}
	if err := h.scenarios.CreateScenario(c.UserContext(), rec, row); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(viewScenario(rec))
}

// listScenarios answers the caller's scenarios, newest first, with limit
// and cursor.
func (h *Handlers) listScenarios(c *fiber.Ctx, req *listScenariosRequest) error {
	p := req.Page()
	rows, err := h.scenarios.ListScenarios(c.UserContext(), caller(c), req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, p.Limit, func(r store.Record) string {
		return schemas.Position{At: r.CreatedAt, ID: r.ID}.String()
	}, viewScenario))
}

// ownedScenario loads a scenario of the caller named in a body; a missing,
// malformed or foreign id is 404 not_found.
func (h *Handlers) ownedScenario(c *fiber.Ctx, id string) (store.Record, error) {
	notFound := apierr.NotFound("no scenario with this id among yours")
	if !schemas.IsID(id) {
		return store.Record{}, notFound
	}
	r, err := h.scenarios.OwnedScenario(c.UserContext(), id, caller(c))
	if errors.Is(err, postgres.ErrNotFound) {
		return store.Record{}, notFound
	}
	return r, err
}
