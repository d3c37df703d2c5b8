package constitution

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/constitution/pdfreport"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// scenarioRef is the body of pdf and artifact creation: a saved scenario of
// the caller by id, or a full scenario (title, sliders, tags).
type scenarioRef struct {
	ScenarioID string      `json:"scenarioId" maxLength:"200" format:"ksuid" description:"a saved scenario of the caller (title and tags, when sent, override its own); otherwise title and sliders are required"`
	Title      string      `json:"title" maxLength:"200" description:"required without scenarioId; trimmed"`
	Sliders    sliderInput `json:"sliders" description:"required without scenarioId"`
	Tags       []string    `json:"tags" maxItems:"20" description:"at most 20 tags of 1 to 50 characters; trimmed, duplicates dropped"`

	id      string
	title   string
	sliders schemas.Sliders
	tags    []string
}

// Validate checks and cleans the fields: title and sliders are required
// when no scenarioId is sent.
func (r *scenarioRef) Validate() error {
	var v bind.Validator
	r.id = cleanText(&v, "scenarioId", r.ScenarioID, bind.MaxTitle, false)
	r.title = cleanText(&v, "title", r.Title, bind.MaxTitle, r.id == "")
	r.tags = cleanTags(&v, r.Tags)
	if r.id == "" {
		r.sliders = parseSliders(&v, "sliders", r.Sliders)
	}
	return v.Err()
}

// resolve returns the scenario a body names: with scenarioId the caller's
// saved scenario (title and tags may be overridden by the body), otherwise
// the scenario sent, with regime and metrics computed.
func (h *Handlers) resolve(c *fiber.Ctx, req *scenarioRef) (store.Record, error) {
	if req.id != "" {
		r, err := h.ownedScenario(c, req.id)
		if err != nil {
			return store.Record{}, err
		}
		r.ScenarioID = r.ID
		if req.title != "" {
			r.Title = req.title
		}
		if req.Tags != nil {
			r.Tags = req.tags
		}
		return r, nil
	}
	o := Evaluate(req.sliders)
	return store.Record{Title: req.title, Sliders: req.sliders, Regime: o.Regime, Metrics: o.Metrics, Tags: req.tags,
		CreatedAt: h.now().UTC().Truncate(time.Second)}, nil
}

// pdf answers a printable report of a saved or sent scenario.
func (h *Handlers) pdf(c *fiber.Ctx, req *scenarioRef) error {
	r, err := h.resolve(c, req)
	if err != nil {
		return err
	}
	raw, err := pdfreport.Render(report(r.Title, r.Sliders, r.Regime, r.Metrics, r.Tags, r.CreatedAt))
	if err != nil {
		return err
	}
	name := "scenario.pdf"
	if r.ScenarioID != "" {
		name = "scenario-" + r.ScenarioID + ".pdf"
	}
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, name))
	return c.Send(raw)
}

func viewArtifact(a store.Artifact) schemas.ConstitutionArtifact {
	v := schemas.ConstitutionArtifact{ID: a.ID, UserID: a.UserID, Title: a.Title, Sliders: a.Sliders, Regime: a.Regime, Metrics: a.Metrics,
		Tags: a.Tags, Votes: a.Votes, CommentCount: a.Comments, CreatedAt: timestamp(a.CreatedAt)}
	if a.ScenarioID != "" {
		id := a.ScenarioID
		v.ScenarioID = &id
	}
	return v
}

// createArtifact publishes a scenario to the catalog and answers 201 with
// the artifact.
func (h *Handlers) createArtifact(c *fiber.Ctx, req *scenarioRef) error {
	r, err := h.resolve(c, req)
	if err != nil {
		return err
	}
	user := caller(c)
	now := h.now().UTC().Truncate(time.Second)
	r.ID, r.UserID, r.CreatedAt = schemas.NewID(), user, now
	env, err := schemas.New(schemas.TypeArtifactCreated, user, user, schemas.ArtifactCreated{
		ArtifactID: r.ID, UserID: user, ScenarioID: r.ScenarioID, Title: r.Title, Sliders: r.Sliders, Regime: r.Regime}, now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsConstitution, env)
	if err != nil {
		return err
	}
	if err := h.catalog.CreateArtifact(c.UserContext(), r, row); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(viewArtifact(store.Artifact{Record: r}))
}

// listArtifactsRequest is a page of the catalog, optionally of one regime.
type listArtifactsRequest struct {
	bind.TimePaging
	Regime string `query:"regime" json:"-" enum:"failed-state,autocracy,oligarchy,technocracy,federal-republic,social-democracy,liberal-democracy,hybrid-regime" description:"only artifacts of this regime"`
}

// Validate reads the page, then the regime (trimmed).
func (r *listArtifactsRequest) Validate() error {
	if err := r.TimePaging.Validate(); err != nil {
		return err
	}
	r.Regime = strings.TrimSpace(r.Regime) // one of the regimes: its enum tag
	return nil
}

// listArtifacts answers the catalog, newest first, optionally of one regime.
func (h *Handlers) listArtifacts(c *fiber.Ctx, req *listArtifactsRequest) error {
	p := req.Page()
	rows, err := h.catalog.ListArtifacts(c.UserContext(), req.Regime, req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, p.Limit, func(a store.Artifact) string {
		return schemas.Position{At: a.CreatedAt, ID: a.ID}.String()
	}, viewArtifact))
}

func artifactNotFound() error { return apierr.NotFound("no artifact with this id") }

// artifactPath is the request of an operation on one artifact.
type artifactPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// knownArtifactID answers 404 for a path id that cannot name an artifact,
// before any body is read (a bad id is 404 whatever the body).
func knownArtifactID(c *fiber.Ctx) error {
	if !schemas.IsID(c.Params("id")) {
		return artifactNotFound()
	}
	return c.Next()
}

func notFoundAs(err error) error {
	if errors.Is(err, postgres.ErrNotFound) {
		return artifactNotFound()
	}
	return err
}

func (h *Handlers) getArtifact(c *fiber.Ctx, req *artifactPath) error {
	a, err := h.catalog.Artifact(c.UserContext(), req.ID)
	if err != nil {
		return notFoundAs(err)
	}
	return c.JSON(viewArtifact(a))
}

// similarLimit is how many neighbours `similar` answers.
const similarLimit = 5

// similar answers the 5 artifacts nearest by Euclidean distance of the
// sliders, nearest first, ties by id, never the artifact itself.
func (h *Handlers) similar(c *fiber.Ctx, req *artifactPath) error {
	rows, err := h.catalog.Similar(c.UserContext(), req.ID, similarLimit)
	if err != nil {
		return notFoundAs(err)
	}
	out := schemas.ConstitutionSimilarList{Items: make([]schemas.ConstitutionSimilar, len(rows))}
	for i, r := range rows {
		out.Items[i] = schemas.ConstitutionSimilar{ConstitutionArtifact: viewArtifact(r.Artifact), Distance: r.Distance}
	}
	return c.JSON(out)
}

// stats answers the catalog's size, by regime.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	total, by, err := h.catalog.Stats(c.UserContext())
	if err != nil {
		return err
	}
	out := schemas.ConstitutionCatalogStats{TotalArtifacts: total, ByRegime: make([]schemas.ConstitutionRegimeCount, len(by))}
	for i, b := range by {
		out.ByRegime[i] = schemas.ConstitutionRegimeCount{Regime: b.Regime, Count: b.Count}
	}
	return c.JSON(out)
}
