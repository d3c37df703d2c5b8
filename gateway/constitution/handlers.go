// Package constitution serves the constitution scenario tool under
// /api/constitution and the planet catalog of constitution artifacts under
// /api/planet, each also under /api-backend (the spec's proxy base).
//
// Sliders are the only input that counts: the server computes the regime and
// the six metrics with the published deterministic rules (rules.go) and
// replaces whatever a client sends. Writes go straight to Postgres (a low
// write rate and no balances); scenario and artifact creation queue their
// events on events.constitution in the same transaction.
package constitution

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
	"github.com/fintech/platform/storage/pipeline"
)

// Prefixes of the two modules, and the proxy base both are also served under.
const (
	Prefix       = "/api/constitution"
	PlanetPrefix = "/api/planet"
	ProxyBase    = "/api-backend"
)

// Scenarios stores the callers' scenarios.
type Scenarios interface {
	CreateScenario(ctx context.Context, r store.Record, event pipeline.OutboxRow) error
	OwnedScenario(ctx context.Context, id, userID string) (store.Record, error)
	ListScenarios(ctx context.Context, userID string, before schemas.Position, limit int) ([]store.Record, error)
}

// Usage counts AI requests per user and calendar month.
type Usage interface {
	TakeAIRequest(ctx context.Context, userID string, now time.Time, limit int64) (int64, bool, error)
	AIUsage(ctx context.Context, userID string, now time.Time) (int64, error)
}

// Catalog stores the planet artifacts and their social data.
type Catalog interface {
	CreateArtifact(ctx context.Context, r store.Record, event pipeline.OutboxRow) error
	Artifact(ctx context.Context, id string) (store.Artifact, error)
	ListArtifacts(ctx context.Context, regime string, before schemas.Position, limit int) ([]store.Artifact, error)
	Similar(ctx context.Context, id string, limit int) ([]store.Similar, error)
	Stats(ctx context.Context) (int64, []store.RegimeCount, error)
	Vote(ctx context.Context, artifactID, userID string, now time.Time) (bool, error)
	Unvote(ctx context.Context, artifactID, userID string) error
	Social(ctx context.Context, artifactID, userID string, after schemas.Position, limit int) (int64, bool, []store.Comment, error)
	AddComment(ctx context.Context, c store.Comment) error
}

var (
	_ Scenarios = (*store.Store)(nil)
	_ Usage     = (*store.Store)(nil)
	_ Catalog   = (*store.Store)(nil)
)

// Config holds the handlers' options.
type Config struct {
	// AILimit is AI_MONTHLY_LIMIT, AI requests per user per calendar month
	// (0 refuses every AI request with 402).
	AILimit int64
	// AITimeout bounds the advisor inside a stream (the request context is
	// gone once streaming starts); 20 seconds when zero.
	AITimeout time.Duration
	// Budgets charges AI requests to the per-IP and global abuse budget
	// (schemas.BudgetAI); nil charges nothing.
	Budgets Budgets
}

// Budgets charges an abuse budget (ratelimit.Budgets).
type Budgets interface {
	Take(c *fiber.Ctx, b schemas.Budget, account string) (*ratelimit.Ticket, error)
}

func (c *Config) setDefaults() {
	if c.AITimeout <= 0 {
		c.AITimeout = 20 * time.Second
	}
}

// Validate reports every invalid option.
func (c Config) Validate() error {
	var errs []error
	if c.AILimit < 0 {
		errs = append(errs, errors.New("AILimit must not be negative"))
	}
	if c.AITimeout < 0 {
		errs = append(errs, errors.New("AITimeout must not be negative"))
	}
	return errors.Join(errs...)
}

// Handlers serve both modules.
type Handlers struct {
	scenarios Scenarios
	usage     Usage
	catalog   Catalog
	advisor   Advisor
	db        platform.Pinger
	require   fiber.Handler // bearer token required
	optional  fiber.Handler // bearer token read when present
	now       func() time.Time
	routes    func() []server.Route
	cfg       Config
}

// NewHandlers builds the handlers. advisor answers ai-suggest (Builtin, or
// a ModelAdvisor); require authenticates the caller and optional reads a
// token when one is sent; routes lists the server's routes for the
// /openapi.json slices.
func NewHandlers(scenarios Scenarios, usage Usage, catalog Catalog, advisor Advisor, db platform.Pinger,
	require, optional fiber.Handler, now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if scenarios == nil || usage == nil || catalog == nil || advisor == nil || db == nil ||
		require == nil || optional == nil || now == nil || routes == nil {
		return nil, errors.New("constitution handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("constitution handlers: %w", err)
	}
	cfg.setDefaults()
	return &Handlers{scenarios: scenarios, usage: usage, catalog: catalog, advisor: advisor, db: db,
		require: require, optional: optional, now: now, routes: routes, cfg: cfg}, nil
}

// Register mounts the routes at /api/... and at /api-backend/api/....
// Each operation is declared with its request and answer types (server.Op):
// binding, validation and the OpenAPI slices come from these declarations.
func (h *Handlers) Register(r server.Router) {
	for _, base := range []string{"", ProxyBase} {
		h.registerConstitution(r, base+Prefix)
		h.registerPlanet(r, base+PlanetPrefix)
	}
}

func (h *Handlers) registerConstitution(r server.Router, prefix string) {
	g := r.Group(prefix).KeyArea("constitution")
	platform.Basics(g, "constitution", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title:       "Constitution scenarios",
		Description: "Scenario builder with eight sliders, computed regimes and metrics, an AI advisor and PDF reports.",
		Prefixes:    []string{prefix},
	}))
	reference := func(path, summary, description string, doc any) {
		server.Get(g, path, server.Op[cachedRequest]{
			Summary: summary, Description: description + " Read-only; answers 304 to a matching If-None-Match.",
			Public: true, Handle: cachedJSON(doc),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "reference data; Cache-Control public, max-age=3600 and an ETag", doc),
				{Status: http.StatusNotModified, Description: "not modified (If-None-Match matched the ETag)"},
			},
		})
	}
	reference("/public/regimes", "Regimes, each with the deterministic rule that selects it (cached 1 hour)",
		"The regimes a scenario can compute to, each with the rule over the sliders that selects it.", regimesDoc())
	reference("/public/presets", "Preset slider settings and the AI prompt templates (cached 1 hour)",
		"Ready-made slider settings to start a scenario from, and the advisor's prompt templates.", presetsDoc())
	reference("/public/countries", "Illustrative presets by country (cached 1 hour)",
		"Illustrative slider settings for a few countries.", countriesDoc())
	reference("/public/sliders-spec", "The eight sliders and how each pushes the six metrics (cached 1 hour)",
		"The eight sliders with their ranges, and how each one moves the six metrics.", sliderSpecDoc())
	server.Post(g, "/scenarios", server.Op[scenarioRequest]{
		Summary:     "Save a scenario; regime and metrics are computed from the sliders",
		Description: "Saves a scenario of the caller; the regime and metrics are computed from its eight sliders. Creates a scenario.",
		Class:       ratelimit.Write, Handle: h.createScenario,
		Responses: []server.Response{server.Answers(http.StatusCreated, "the saved scenario with the computed regime and metrics", schemas.ConstitutionScenario{})},
	}, h.require)
	server.Get(g, "/scenarios", server.Op[listScenariosRequest]{
		Summary:     "The caller's scenarios, newest first",
		Description: "Pages through the caller's saved scenarios, newest first. Read-only.",
		Handle:      h.listScenarios,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's scenarios, newest first", schemas.Page[schemas.ConstitutionScenario]{})},
	}, h.require)
	audit := auditRequired(h.require)
	aiFails := []server.Response{
		server.Fails(http.StatusUnauthorized, "audit_required: no valid bearer token"),
		server.Fails(http.StatusPaymentRequired, "spend_limit_exceeded: monthly AI request limit reached (aiRequestsUsed, aiRequestsLimit and periodEnd say which and until when)"),
		server.Fails(http.StatusNotFound, "template_not_found: templateId names no template of GET public/presets"),
	}
	server.Post(g, "/ai-suggest", server.Op[aiRequest]{
		Summary:     "Slider suggestions and the predicted result (counts against the monthly AI limit)",
		Description: "Asks the advisor for slider suggestions and the predicted result. Counts one call against the caller's monthly AI limit; saves nothing else.",
		Class:       ratelimit.Write, Handle: h.aiSuggest,
		Responses: append([]server.Response{server.Answers(http.StatusOK, "suggestions and the predicted result", schemas.ConstitutionAdvice{})}, aiFails...),
	}, audit)
	server.Post(g, "/ai-suggest-stream", server.Op[aiRequest]{
		Summary:     "The same as ai-suggest as server-sent events: progress events, then result",
		Description: "The advisor's answer as server-sent events (progress, then the result). Counts one call against the caller's monthly AI limit.",
		Class:       ratelimit.Write, Handle: h.aiSuggestStream,
		Responses: append([]server.Response{{Status: http.StatusOK, ContentType: "text/event-stream",
			Description: "server-sent events: three `progress` events (data: ConstitutionAdviceProgress), then one `result` event (data: ConstitutionAdvice)"}}, aiFails...),
	}, audit)
	server.Post(g, "/pdf", server.Op[scenarioRef]{
		Summary:     "A printable PDF report of a saved or sent scenario",
		Description: "Renders a PDF report of one of the caller's saved scenarios, or of sliders sent in the body. Changes nothing; another user's scenario answers 404.",
		Class:       ratelimit.Write, Handle: h.pdf,
		Responses: []server.Response{
			{Status: http.StatusOK, ContentType: "application/pdf", Description: "the report (Content-Disposition: attachment)"},
			server.Fails(http.StatusNotFound, "not_found: no such scenario of the caller"),
		},
	}, h.require)
	server.Get(g, "/me/plan", server.Op[server.NoRequest]{
		Summary:     "The caller's AI plan and this month's usage",
		Description: "The caller's AI plan, monthly limit and this month's usage. Read-only.",
		Handle:      h.plan,
		Responses:   []server.Response{server.Answers(http.StatusOK, "plan and usage", schemas.ConstitutionPlan{})},
	}, h.require)
}

func (h *Handlers) registerPlanet(r server.Router, prefix string) {
	g := r.Group(prefix).KeyArea("constitution")
	platform.Basics(g, "planet", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title:       "Planet catalog of constitution artifacts",
		Description: "Published scenarios with similarity search, votes and comments. Reads need no token.",
		Prefixes:    []string{prefix},
	}))
	notFound := server.Fails(http.StatusNotFound, "not_found: no artifact with this id")
	server.Post(g, "/constitution-artifacts", server.Op[scenarioRef]{
		Summary:     "Publish a scenario (or sliders) to the catalog",
		Description: "Publishes one of the caller's scenarios, or sliders sent in the body, as a catalog artifact everyone can read. Creates an artifact.",
		Class:       ratelimit.Write, Handle: h.createArtifact,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the published artifact", schemas.ConstitutionArtifact{}),
			server.Fails(http.StatusNotFound, "not_found: no such scenario of the caller"),
		},
	}, h.require)
	server.Get(g, "/constitution-artifacts", server.Op[listArtifactsRequest]{
		Summary:     "Catalog artifacts, newest first, optionally of one regime",
		Description: "Pages through the published artifacts, newest first, optionally of one regime. Read-only.",
		Public:      true, Handle: h.listArtifacts,
		Responses: []server.Response{server.Answers(http.StatusOK, "artifacts, newest first", schemas.Page[schemas.ConstitutionArtifact]{})},
	}, h.optional)
	server.Get(g, "/constitution-artifacts/stats", server.Op[server.NoRequest]{
		Summary:     "Catalog size, by regime",
		Description: "How many artifacts the catalog holds, by regime. Read-only.",
		Public:      true, Handle: h.stats,
		Responses: []server.Response{server.Answers(http.StatusOK, "catalog statistics", schemas.ConstitutionCatalogStats{})},
	}, h.optional)
	server.Get(g, "/constitution-artifacts/:id", server.Op[artifactPath]{
		Summary:     "One artifact",
		Description: "One published artifact with its sliders, regime and metrics. Read-only.",
		Public:      true, Handle: h.getArtifact,
		Responses: []server.Response{server.Answers(http.StatusOK, "the artifact", schemas.ConstitutionArtifact{}), notFound},
	}, h.optional, knownArtifactID)
	server.Get(g, "/constitution-artifacts/:id/similar", server.Op[artifactPath]{
		Summary:     "The 5 artifacts nearest by Euclidean distance of the sliders",
		Description: "The five artifacts whose sliders are nearest to this one's. Read-only.",
		Public:      true, Handle: h.similar,
		Responses: []server.Response{server.Answers(http.StatusOK, "at most 5 nearest artifacts, nearest first, ties by id", schemas.ConstitutionSimilarList{}), notFound},
	}, h.optional, knownArtifactID)
	server.Post(g, "/constitution-artifacts/:id/vote", server.Op[artifactPath]{
		Summary:     "Vote for an artifact (one vote per user, idempotent)",
		Description: "Records the caller's vote for an artifact; voting again changes nothing.",
		Class:       ratelimit.Write, Handle: h.vote,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "vote recorded", schemas.ConstitutionVote{}),
			server.Answers(http.StatusOK, "the caller had voted already", schemas.ConstitutionVote{}),
			notFound,
		},
	}, h.require, knownArtifactID)
	server.Handle(g, http.MethodDelete, "/constitution-artifacts/:id/vote", server.Op[artifactPath]{
		Summary:     "Remove the caller's vote (idempotent)",
		Description: "Removes the caller's vote from an artifact, if any.",
		Class:       ratelimit.Write, Handle: h.unvote,
		Responses: []server.Response{server.Answers(http.StatusOK, "vote removed (or there was none)", schemas.ConstitutionVote{}), notFound},
	}, h.require, knownArtifactID)
	server.Post(g, "/constitution-artifacts/:id/comment", server.Op[commentRequest]{
		Summary:     "Comment on an artifact (1 to 2,000 characters)",
		Description: "Adds the caller's comment to an artifact.",
		Class:       ratelimit.Write, Handle: h.comment,
		Responses: []server.Response{server.Answers(http.StatusCreated, "the comment", schemas.ConstitutionComment{}), notFound},
	}, h.require, knownArtifactID)
	server.Get(g, "/constitution-artifacts/:id/social", server.Op[socialRequest]{
		Summary:     "Votes, whether the caller voted, and a page of the comments",
		Description: "An artifact's vote count, whether the caller voted (with a token) and one page of its comments (limit, cursor; nextCursor while more remain). Read-only.",
		Caller:      "anyone; a bearer token, when sent, fills in whether the caller voted",
		Public:      true, Handle: h.social,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "votes, whether the caller voted, one page of comments oldest first", schemas.ConstitutionSocial{}), notFound,
			server.Fails(http.StatusBadRequest, "invalid_cursor: the cursor is not one this API issued"),
		},
	}, h.optional, knownArtifactID)
	server.Get(g, "/constitution-artifacts/:id/comments", server.Op[socialRequest]{
		Summary:     "A page of an artifact's comments, oldest first",
		Description: "One page of an artifact's comments, oldest first, as { items, nextCursor }. Read-only.",
		Caller:      "anyone",
		Public:      true, Handle: h.comments,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "one page of comments, oldest first", schemas.Page[schemas.ConstitutionComment]{}), notFound,
			server.Fails(http.StatusBadRequest, "invalid_cursor: the cursor is not one this API issued"),
		},
	}, h.optional, knownArtifactID)
}

// auditRequired turns the bearer-token check's 401 auth_required into the
// AI endpoints' 401 audit_required.
func auditRequired(require fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := require(c)
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code == apierr.CodeAuthRequired && !authenticated(c) {
			return apierr.AuditRequired()
		}
		return err
	}
}

func authenticated(c *fiber.Ctx) bool {
	_, ok := auth.User(c)
	return ok
}

// caller returns the authenticated user id, or "" on public routes.
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}

// timestamp formats t as RFC 3339 UTC with whole seconds.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
