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
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
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
	ListScenarios(ctx context.Context, userID, after string, limit int) ([]store.Record, error)
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
	ListArtifacts(ctx context.Context, regime, after string, limit int) ([]store.Artifact, error)
	Similar(ctx context.Context, id string, limit int) ([]store.Similar, error)
	Stats(ctx context.Context) (int64, []store.RegimeCount, error)
	Vote(ctx context.Context, artifactID, userID string, now time.Time) (bool, error)
	Unvote(ctx context.Context, artifactID, userID string) error
	Social(ctx context.Context, artifactID, userID string) (int64, bool, []store.Comment, error)
	AddComment(ctx context.Context, c store.Comment) error
}

var (
	_ Scenarios = (*store.Store)(nil)
	_ Usage     = (*store.Store)(nil)
	_ Catalog   = (*store.Store)(nil)
)

// Deps are the handlers' dependencies; all are required.
type Deps struct {
	Scenarios Scenarios
	Usage     Usage
	Catalog   Catalog
	// Advisor answers ai-suggest: Builtin, or a ModelAdvisor.
	Advisor Advisor
	// AILimit is AI_MONTHLY_LIMIT, requests per user per calendar month.
	AILimit int64
	// AITimeout bounds the advisor inside a stream (the request context
	// is gone once streaming starts).
	AITimeout time.Duration
	DB        platform.Pinger
	Require   fiber.Handler // bearer token required
	Optional  fiber.Handler // bearer token read when present
	Now       func() time.Time
	Routes    func() []server.Route
	Log       *slog.Logger
}

// Handlers serve both modules.
type Handlers struct{ d Deps }

// NewHandlers builds the handlers.
func NewHandlers(d Deps) (*Handlers, error) {
	if d.Scenarios == nil || d.Usage == nil || d.Catalog == nil || d.Advisor == nil || d.DB == nil ||
		d.Require == nil || d.Optional == nil || d.Now == nil || d.Routes == nil || d.Log == nil {
		return nil, errors.New("constitution handlers: nil dependency")
	}
	if d.AILimit < 0 {
		return nil, errors.New("constitution handlers: negative AI limit")
	}
	if d.AITimeout <= 0 {
		d.AITimeout = 20 * time.Second
	}
	return &Handlers{d: d}, nil
}

// Register mounts the routes at /api/... and at /api-backend/api/....
func (h *Handlers) Register(r server.Router) {
	for _, base := range []string{"", ProxyBase} {
		h.registerConstitution(r, base+Prefix)
		h.registerPlanet(r, base+PlanetPrefix)
	}
}

func (h *Handlers) registerConstitution(r server.Router, prefix string) {
	g := r.Group(prefix)
	g.Get("/health", "Liveness and database reachability", platform.Health(h.d.DB, nil))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the constitution module", h.openapi(prefix))
	g.Get("/public/regimes", "Regimes, each with the deterministic rule that selects it (cached 1 hour)", cachedJSON(regimesDoc()))
	g.Get("/public/presets", "Preset slider settings and the AI prompt templates (cached 1 hour)", cachedJSON(presetsDoc()))
	g.Get("/public/countries", "Illustrative presets by country (cached 1 hour)", cachedJSON(countriesDoc()))
	g.Get("/public/sliders-spec", "The eight sliders and how each pushes the six metrics (cached 1 hour)", cachedJSON(sliderSpecDoc()))
	g.Post("/scenarios", ratelimit.Write, "Save a scenario; regime and metrics are computed from the sliders", h.d.Require, h.createScenario)
	g.Get("/scenarios", "The caller's scenarios, newest first", h.d.Require, h.listScenarios)
	audit := auditRequired(h.d.Require)
	g.Post("/ai-suggest", ratelimit.Write, "Slider suggestions and the predicted result (counts against the monthly AI limit)", audit, h.aiSuggest)
	g.Post("/ai-suggest-stream", ratelimit.Write, "The same as ai-suggest as server-sent events: progress events, then result", audit, h.aiSuggestStream)
	g.Post("/pdf", ratelimit.Write, "A printable PDF report of a saved or sent scenario", h.d.Require, h.pdf)
	g.Get("/me/plan", "The caller's AI plan and this month's usage", h.d.Require, h.plan)
}

func (h *Handlers) registerPlanet(r server.Router, prefix string) {
	g := r.Group(prefix)
	g.Get("/health", "Liveness and database reachability", platform.Health(h.d.DB, nil))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the planet module", h.openapi(prefix))
	g.Post("/constitution-artifacts", ratelimit.Write, "Publish a scenario (or sliders) to the catalog", h.d.Require, h.createArtifact)
	g.Get("/constitution-artifacts", "Catalog artifacts, newest first, optionally of one regime", h.d.Optional, h.listArtifacts)
	g.Get("/constitution-artifacts/stats", "Catalog size, by regime", h.d.Optional, h.stats)
	g.Get("/constitution-artifacts/:id", "One artifact", h.d.Optional, h.getArtifact)
	g.Get("/constitution-artifacts/:id/similar", "The 5 artifacts nearest by Euclidean distance of the sliders", h.d.Optional, h.similar)
	g.Post("/constitution-artifacts/:id/vote", ratelimit.Write, "Vote for an artifact (one vote per user, idempotent)", h.d.Require, h.vote)
	g.Handle(http.MethodDelete, "/constitution-artifacts/:id/vote", ratelimit.Write, "Remove the caller's vote (idempotent)", h.d.Require, h.unvote)
	g.Post("/constitution-artifacts/:id/comment", ratelimit.Write, "Comment on an artifact (1 to 2,000 characters)", h.d.Require, h.comment)
	g.Get("/constitution-artifacts/:id/social", "Votes, whether the caller voted, and the comments", h.d.Optional, h.social)
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
