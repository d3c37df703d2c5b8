// Package reputation serves /api/reputation: events go through the
// reputation.commands topic (keyed by user); scores and a user's events are
// read from Postgres; the leaderboard and the stats come from the ClickHouse
// copy.
package reputation

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	store "github.com/fintech/platform/storage/reputation"
)

// Prefix is where the module is mounted.
const Prefix = "/api/reputation"

// HeaderServiceKey carries the platform's reputation service key.
const HeaderServiceKey = "X-Reputation-Service-Key"

// MaxLeaderboard is the largest leaderboard page (spec: up to 100).
const MaxLeaderboard = 100

// Reader is what the handlers read from Postgres.
type Reader interface {
	ScoreOf(ctx context.Context, userID string) (store.Score, bool, error)
	UserExists(ctx context.Context, userID string) (bool, error)
	Recent(ctx context.Context, userID string, limit int) ([]store.Event, error)
	RankedUsers(ctx context.Context) (int64, error)
}

var _ Reader = (*store.Store)(nil)

// Analytics reads the ClickHouse copy.
type Analytics interface {
	Leaderboard(ctx context.Context, q clickhouse.LeaderQuery) ([]clickhouse.LeaderRow, error)
	Distribution(ctx context.Context, since time.Time) ([]clickhouse.ScoreCount, int64, error)
}

// Sender publishes a command and waits for its reply.
type Sender interface {
	Send(ctx context.Context, cmd commands.Command) (schemas.Reply, error)
}

// Config holds the handlers' options.
type Config struct {
	// ServiceKey is the shared secret of X-Reputation-Service-Key
	// (REPUTATION_SERVICE_KEY), at least 32 characters; empty disables the
	// header.
	ServiceKey string
}

// Validate reports every problem of the options.
func (c Config) Validate() error {
	var errs []error
	if c.ServiceKey != "" && len(c.ServiceKey) < 32 {
		errs = append(errs, errors.New("reputation service key: must be at least 32 characters"))
	}
	return errors.Join(errs...)
}

// Handlers serve /api/reputation.
type Handlers struct {
	db        platform.Pinger
	reads     Reader
	analytics Analytics
	bus       Sender
	authn     *auth.Authenticator
	admin     fiber.Handler
	now       func() time.Time
	routes    func() []server.Route
	cfg       Config
}

// NewHandlers checks the dependencies and builds the handlers. admin admits
// reputation admins (verified e-mail on the allowlist) after the
// bearer-token check: they may post events with their JWT. routes lists
// the server's routes for /openapi.json.
func NewHandlers(db platform.Pinger, reads Reader, analytics Analytics, bus Sender, authn *auth.Authenticator,
	admin fiber.Handler, now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if db == nil || reads == nil || analytics == nil || bus == nil || authn == nil || admin == nil || now == nil || routes == nil {
		return nil, errors.New("reputation handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{db: db, reads: reads, analytics: analytics, bus: bus, authn: authn, admin: admin, now: now,
		routes: routes, cfg: cfg}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations. Reads other than /me are public.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("reputation")
	platform.BasicsOf(g, "reputation", platform.HealthOf(h.db, h.health), Health{}, openapi.Handler(h.routes, openapi.Doc{
		Title:       "Reputation",
		Description: "Weighted events raise or lower a user's score; the score names the rank.",
		Prefixes:    []string{Prefix},
	}))
	server.Post(g, "/events", server.Op[eventRequest]{
		Summary:     "Add a weighted event to a user's score (service key or admin JWT)",
		Description: "Applies a weighted event to a user's score and rank; a repeated (userId, kind, sourceId) answers the first result and changes nothing.",
		Caller:      "a platform service with the service key in the `" + HeaderServiceKey + "` header, or a reputation admin with `Authorization: Bearer <token>`",
		Class:       ratelimit.Write,
		Role:        "reputation admin (or the caller sends the service key)", Handle: h.post,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the event applied: the score and rank before and after", schemas.ReputationEventResult{}),
			server.Answers(http.StatusOK, "replay of (userId, kind, sourceId): idempotent true", schemas.ReputationEventResult{}),
			server.Fails(http.StatusUnauthorized, "auth_required or key_invalid: neither a valid service key nor an admin token"),
			server.Fails(http.StatusForbidden, "forbidden: the token is not a reputation admin's"),
			server.Fails(http.StatusNotFound, "user_not_found: no user with this id"),
			server.Fails(http.StatusConflict, "idempotency_key_reused: the Idempotency-Key came with another body"),
		},
	}, h.authorize)
	server.Get(g, "/me", server.Op[server.NoRequest]{
		Summary:     "The caller's score, rank and last 50 events",
		Description: "The caller's score, rank and last 50 events. Read-only.",
		Handle:      h.me,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's score, rank and last 50 events", schemas.ReputationMe{})},
	}, h.authn.Require())
	server.Get(g, "/leaderboard", server.Op[leaderboardRequest]{
		Summary:     "Top users by score; query limit (<= 100), rank, since",
		Description: "The leaderboard: users by score, optionally of one rank or since a time. Read-only.",
		Public:      true, Handle: h.leaderboard,
		Responses: []server.Response{server.Answers(http.StatusOK, "top users by score, from the analytics copy", schemas.ReputationLeaderboard{})},
	})
	server.Get(g, "/rank/:userId", server.Op[rankPath]{
		Summary:     "A user's public rank and score",
		Description: "One user's public rank and score. Read-only.",
		Public:      true, Handle: h.rank,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the user's public score and rank", schemas.ReputationRank{}),
			server.Fails(http.StatusNotFound, "user_not_found: no user with this id"),
		},
	})
	server.Get(g, "/stats", server.Op[server.NoRequest]{
		Summary:     "Users per rank, mean and median score, events in 24h",
		Description: "Aggregate figures: users per rank, mean and median score, events in the last 24 hours. Read-only.",
		Public:      true, Handle: h.stats,
		Responses: []server.Response{server.Answers(http.StatusOK, "users per rank, mean and median score, events in 24h", schemas.ReputationStats{})},
	})
}

// Health is the reputation module's health answer: the ranked-user count.
type Health struct {
	platform.HealthAnswer
	RankedUsers int64 `json:"rankedUsers" required:"true" minimum:"0"`
}

func (h *Handlers) health(ctx context.Context, base platform.HealthAnswer) (Health, error) {
	n, err := h.reads.RankedUsers(ctx)
	if err != nil {
		return Health{}, err
	}
	return Health{HealthAnswer: base, RankedUsers: n}, nil
}

const actorKey = "reputation.actor"

// authorize admits the service key (constant-time compare) or a JWT of an
// e-mail on the reputation admin allowlist.
func (h *Handlers) authorize(c *fiber.Ctx) error {
	if key := c.Get(HeaderServiceKey); key != "" {
		if h.cfg.ServiceKey == "" || len(key) < 32 ||
			subtle.ConstantTimeCompare([]byte(key), []byte(h.cfg.ServiceKey)) != 1 {
			return apierr.KeyInvalid()
		}
		c.Locals(actorKey, "service")
		return c.Next()
	}
	tok, ok := auth.BearerToken(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return apierr.AuthRequired()
	}
	p, err := h.authn.Authenticate(c.UserContext(), tok)
	if err != nil {
		return err
	}
	auth.SetUser(c, p)
	c.Locals(actorKey, p.UserID)
	return h.admin(c)
}

// unavailable is the answer of an analytics read while ClickHouse is down.
func unavailable() error {
	return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reputation analytics are unavailable; retry shortly")
}
