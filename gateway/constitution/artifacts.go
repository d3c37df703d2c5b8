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
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// scenarioRef is the body of pdf and artifact creation: a saved scenario of
// the caller by id, or a full scenario (title, sliders, tags).
type scenarioRef struct {
	ScenarioID string      `json:"scenarioId"`
	Title      string      `json:"title"`
	Sliders    sliderInput `json:"sliders"`
	Tags       []string    `json:"tags"`
}

// resolve returns the scenario a body names: with scenarioId the caller's
// saved scenario (title and tags may be overridden by the body), otherwise
// the scenario sent, with regime and metrics computed.
func (h *Handlers) resolve(c *fiber.Ctx, req scenarioRef) (store.Record, error) {
	var v bind.Validator
	id := cleanText(&v, "scenarioId", req.ScenarioID, bind.MaxTitle, false)
	title := cleanText(&v, "title", req.Title, bind.MaxTitle, id == "")
	tags := cleanTags(&v, req.Tags)
	var sliders schemas.Sliders
	if id == "" {
		sliders = parseSliders(&v, "sliders", req.Sliders)
	}
	if err := v.Err(); err != nil {
		return store.Record{}, err
	}
	if id != "" {
		r, err := h.ownedScenario(c, id)
		if err != nil {
			return store.Record{}, err
		}
		r.ScenarioID = r.ID
		if title != "" {
			r.Title = title
		}
		if req.Tags != nil {
			r.Tags = tags
		}
		return r, nil
	}
	o := Evaluate(sliders)
	return store.Record{Title: title, Sliders: sliders, Regime: o.Regime, Metrics: o.Metrics, Tags: tags,
		CreatedAt: h.d.Now().UTC().Truncate(time.Second)}, nil
}

// pdf answers a printable report of a saved or sent scenario.
func (h *Handlers) pdf(c *fiber.Ctx) error {
	var req scenarioRef
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	r, err := h.resolve(c, req)
	if err != nil {
		return err
	}
	raw, err := RenderPDF(PDFInput{Title: r.Title, Sliders: r.Sliders, Regime: r.Regime, Metrics: r.Metrics, Tags: r.Tags, CreatedAt: r.CreatedAt})
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

type artifactView struct {
	ID           string          `json:"id"`
	UserID       string          `json:"userId"`
	ScenarioID   *string         `json:"scenarioId"`
	Title        string          `json:"title"`
	Sliders      schemas.Sliders `json:"sliders"`
	Regime       string          `json:"regime"`
	Metrics      schemas.Metrics `json:"metrics"`
	Tags         []string        `json:"tags"`
	Votes        int64           `json:"votes"`
	CommentCount int64           `json:"commentCount"`
	CreatedAt    string          `json:"createdAt"`
}

func viewArtifact(a store.Artifact) artifactView {
	v := artifactView{ID: a.ID, UserID: a.UserID, Title: a.Title, Sliders: a.Sliders, Regime: a.Regime, Metrics: a.Metrics,
		Tags: a.Tags, Votes: a.Votes, CommentCount: a.Comments, CreatedAt: timestamp(a.CreatedAt)}
	if a.ScenarioID != "" {
		id := a.ScenarioID
		v.ScenarioID = &id
	}
	return v
}

// createArtifact publishes a scenario to the catalog and answers 201 with
// the artifact.
func (h *Handlers) createArtifact(c *fiber.Ctx) error {
	var req scenarioRef
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	r, err := h.resolve(c, req)
	if err != nil {
		return err
	}
	user := caller(c)
	now := h.d.Now().UTC().Truncate(time.Second)
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
	if err := h.d.Catalog.CreateArtifact(c.UserContext(), r, row); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(viewArtifact(store.Artifact{Record: r}))
}

// listArtifacts answers the catalog, newest first, optionally of one regime.
func (h *Handlers) listArtifacts(c *fiber.Ctx) error {
	p, err := bind.IDPageQuery(c)
	if err != nil {
		return err
	}
	regime := strings.TrimSpace(c.Query("regime"))
	if regime != "" {
		var v bind.Validator
		v.OneOf("regime", regime, RegimeKeys()...)
		if err := v.Err(); err != nil {
			return err
		}
	}
	rows, err := h.d.Catalog.ListArtifacts(c.UserContext(), regime, p.After, p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(page(rows, p.Limit, func(a store.Artifact) string { return a.ID }, viewArtifact))
}

func artifactNotFound() error { return apierr.NotFound("no artifact with this id") }

// artifactID returns the path id, or 404 when it cannot name an artifact.
func artifactID(c *fiber.Ctx) (string, error) {
	id := c.Params("id")
	if !schemas.IsID(id) {
		return "", artifactNotFound()
	}
	return strings.Clone(id), nil
}

func notFoundAs(err error) error {
	if errors.Is(err, postgres.ErrNotFound) {
		return artifactNotFound()
	}
	return err
}

func (h *Handlers) getArtifact(c *fiber.Ctx) error {
	id, err := artifactID(c)
	if err != nil {
		return err
	}
	a, err := h.d.Catalog.Artifact(c.UserContext(), id)
	if err != nil {
		return notFoundAs(err)
	}
	return c.JSON(viewArtifact(a))
}

type similarView struct {
	artifactView
	Distance float64 `json:"distance"`
}

// similarLimit is how many neighbours `similar` answers.
const similarLimit = 5

// similar answers the 5 artifacts nearest by Euclidean distance of the
// sliders, nearest first, ties by id, never the artifact itself.
func (h *Handlers) similar(c *fiber.Ctx) error {
	id, err := artifactID(c)
	if err != nil {
		return err
	}
	rows, err := h.d.Catalog.Similar(c.UserContext(), id, similarLimit)
	if err != nil {
		return notFoundAs(err)
	}
	out := make([]similarView, len(rows))
	for i, r := range rows {
		out[i] = similarView{artifactView: viewArtifact(r.Artifact), Distance: r.Distance}
	}
	return c.JSON(map[string]any{"items": out})
}

type regimeCount struct {
	Regime string `json:"regime"`
	Count  int64  `json:"count"`
}

func (h *Handlers) stats(c *fiber.Ctx) error {
	total, by, err := h.d.Catalog.Stats(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]regimeCount, len(by))
	for i, b := range by {
		out[i] = regimeCount{Regime: b.Regime, Count: b.Count}
	}
	return c.JSON(map[string]any{"totalArtifacts": total, "byRegime": out})
}
