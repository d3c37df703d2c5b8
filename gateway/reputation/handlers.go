// Package reputation serves /api/reputation: events go through the
// reputation.commands topic (keyed by user); scores and a user's events are
// read from Postgres; the leaderboard and the stats come from the ClickHouse
// copy.
package reputation

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	store "github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
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
	tokens    *auth.Tokens
	admin     fiber.Handler
	now       func() time.Time
	routes    func() []server.Route
	cfg       Config
}

// NewHandlers checks the dependencies and builds the handlers. admin admits
// reputation admins (verified e-mail on the allowlist) after the
// bearer-token check: they may post events with their JWT. routes lists
// the server's routes for /openapi.json.
func NewHandlers(db platform.Pinger, reads Reader, analytics Analytics, bus Sender, tokens *auth.Tokens,
	admin fiber.Handler, now func() time.Time, routes func() []server.Route, cfg Config) (*Handlers, error) {
	if db == nil || reads == nil || analytics == nil || bus == nil || tokens == nil || admin == nil || now == nil || routes == nil {
		return nil, errors.New("reputation handlers: nil dependency")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{db: db, reads: reads, analytics: analytics, bus: bus, tokens: tokens, admin: admin, now: now,
		routes: routes, cfg: cfg}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations. Reads other than /me are public.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
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
	}, h.tokens.Require())
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
	p, err := h.tokens.Verify(tok)
	if err != nil {
		return apierr.AuthRequired()
	}
	auth.SetUser(c, p)
	c.Locals(actorKey, p.UserID)
	return h.admin(c)
}

// eventRequest is the body of POST /events.
type eventRequest struct {
	UserID       string         `json:"userId" required:"true" format:"ksuid" description:"the user the event is about"`
	Kind         string         `json:"kind" required:"true" minLength:"1" maxLength:"64"`
	SourceModule string         `json:"sourceModule" required:"true" minLength:"1" maxLength:"64"`
	Weight       *weight        `json:"weight" required:"true" nullable:"false"`
	SourceID     string         `json:"sourceId" maxLength:"256" description:"names the originating record: a re-sent event is applied once"`
	Meta         map[string]any `json:"meta" description:"at most 16 KiB of JSON"`
	// ServiceKey is read by the authorization before binding; it is
	// declared here so that the document states it.
	ServiceKey string `header:"X-Reputation-Service-Key" json:"-" description:"the platform's reputation service key, instead of an admin bearer token"`
	weight     int64
}

// weight keeps the raw JSON of the weight so that only an integer literal
// passes (a string or a fraction is a validation failure, not a JSON error).
type weight []byte

// PrepareJSONSchema describes the weight as the integer it must be.
func (weight) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithMinimum(-schemas.ReputationMaxWeight).WithMaximum(schemas.ReputationMaxWeight).
		WithDescription("the signed change the event makes to the score")
	s.Items = nil
	s.Format = nil
	return nil
}

// UnmarshalJSON records the raw value.
func (w *weight) UnmarshalJSON(b []byte) error {
	*w = append((*w)[:0], b...)
	return nil
}

// Validate checks what only the request has (the weight as sent, the meta
// object's size, the source module an admin must name) and the event's own
// rule (schemas.ReputationEvent.Validate), reporting every field at once.
func (req *eventRequest) Validate() error {
	var v bind.Validator // sourceModule's presence and length are bound by its tags
	if req.Weight == nil {
		v.Fail("weight", "is required")
	} else {
		n, err := strconv.ParseInt(string(*req.Weight), 10, 64)
		switch {
		case err != nil:
			v.Fail("weight", "must be an integer")
		case n < -schemas.ReputationMaxWeight || n > schemas.ReputationMaxWeight:
			v.Fail("weight", "must be between -1000 and 1000")
		}
		req.weight = n
	}
	if req.Meta != nil {
		if b, err := json.Marshal(req.Meta); err != nil || len(b) > schemas.ReputationMaxMeta {
			v.Fail("meta", "must be a JSON object of at most 16 KiB")
		}
	}
	var problems schemas.FieldProblems
	if errors.As(req.event().Validate(), &problems) {
		for field, reason := range problems {
			v.Fail(field, reason)
		}
	}
	return v.Err()
}

// event is the command the request asks for.
func (req *eventRequest) event() schemas.ReputationEvent {
	return schemas.ReputationEvent{UserID: req.UserID, Kind: req.Kind, SourceModule: req.SourceModule, Weight: req.weight,
		SourceID: req.SourceID, Meta: req.Meta}
}

// post queues the event on the user's partition and answers the applier's
// reply.
func (h *Handlers) post(c *fiber.Ctx, req *eventRequest) error {
	actor, _ := c.Locals(actorKey).(string)
	env, err := schemas.New(schemas.TypeReputationEvent, req.UserID, actor, req.event(), h.now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.bus, topics.ReputationCommands, env,
		commands.RequestIdempotency(c, actor, "POST "+Prefix+"/events"))
}

// me answers the caller's score, rank and last 50 events.
func (h *Handlers) me(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	ctx := c.UserContext()
	sc, found, err := h.reads.ScoreOf(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !found {
		sc.Rank = schemas.RankOf(0)
	}
	es, err := h.reads.Recent(ctx, p.UserID, 50)
	if err != nil {
		return err
	}
	out := schemas.ReputationMe{UserID: p.UserID, Score: sc.Score, Rank: sc.Rank, Events: make([]schemas.ReputationEventView, 0, len(es))}
	for _, e := range es {
		j := schemas.ReputationEventView{ID: e.ID, Kind: e.Kind, SourceModule: e.SourceModule, Weight: e.Weight,
			ScoreAfter: e.ScoreAfter, RankAfter: e.RankAfter, CreatedAt: e.CreatedAt.UTC()}
		if e.SourceID != "" {
			s := e.SourceID
			j.SourceID = &s
		}
		if e.Meta != nil {
			j.Meta = schemas.RawObject(e.Meta)
		}
		out.Events = append(out.Events, j)
	}
	return c.JSON(out)
}

// leaderboardRequest is the query of GET /leaderboard.
type leaderboardRequest struct {
	Limit leaderLimit `query:"limit" json:"-"`
	Rank  string      `query:"rank" json:"-" enum:"seedling,sprout,steady,strong,titan" description:"only users of this rank"`
	Since string      `query:"since" json:"-" format:"date-time" description:"rank by the weights gained since this time"`
	query clickhouse.LeaderQuery
}

// leaderLimit is the leaderboard size a client asks for: a positive
// integer, clamped to MaxLeaderboard; 50 when absent.
type leaderLimit string

// PrepareJSONSchema describes the limit as the integer it is.
func (leaderLimit) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithMinimum(1).WithDefault(50).
		WithDescription("leaderboard size; larger values are clamped to 100")
	return nil
}

// Validate reads the limit, rank and since.
func (req *leaderboardRequest) Validate() error {
	req.query = clickhouse.LeaderQuery{Limit: 50}
	var v bind.Validator
	if req.Limit != "" {
		n, err := strconv.Atoi(string(req.Limit))
		v.Check(err == nil && n >= 1, "limit", "must be a positive integer")
		req.query.Limit = min(max(n, 1), MaxLeaderboard)
	}
	req.query.Rank = req.Rank // its enum and since's date-time format are bound by the tags
	if req.Since != "" {
		t, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(req.Since))
		req.query.Since = &t
	}
	return v.Err()
}

// leaderboard answers the top users by score from the analytics copy; 503
// when it does not answer.
func (h *Handlers) leaderboard(c *fiber.Ctx, req *leaderboardRequest) error {
	q := req.query
	rows, err := h.analytics.Leaderboard(c.UserContext(), q)
	if err != nil {
		return unavailable()
	}
	out := schemas.ReputationLeaderboard{Items: make([]schemas.ReputationLeader, 0, len(rows)), Limit: q.Limit, Source: "clickhouse"}
	if q.Rank != "" {
		out.Rank = &q.Rank
	}
	if q.Since != nil {
		since := q.Since.UTC().Format(time.RFC3339)
		out.Since = &since
	}
	for _, r := range rows {
		out.Items = append(out.Items, schemas.ReputationLeader{Position: r.Position, UserID: r.UserID, Score: r.Score, Rank: r.Rank, Gained: r.Gained})
	}
	return c.JSON(out)
}

func unavailable() error {
	return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reputation analytics are unavailable; retry shortly")
}

// rankPath is the request of GET /rank/:userId.
type rankPath struct {
	UserID string `path:"userId" json:"-" format:"ksuid"`
}

// rank answers a user's public score and rank: no personal data.
func (h *Handlers) rank(c *fiber.Ctx, req *rankPath) error {
	id := req.UserID
	notFound := apierr.New(http.StatusNotFound, schemas.CodeUserNotFound, "no user with this id")
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) || len(id) > 128 {
		return notFound
	}
	ctx := c.UserContext()
	sc, found, err := h.reads.ScoreOf(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		ok, err := h.reads.UserExists(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return notFound
		}
		sc.Rank = schemas.RankOf(0)
	}
	return c.JSON(schemas.ReputationRank{UserID: id, Score: sc.Score, Rank: sc.Rank})
}

// Stats are the reputation statistics.
type Stats = schemas.ReputationStats

// ComputeStats derives the statistics from a score distribution (ascending
// by score): the median of an even count is the mean of the two middle
// scores.
func ComputeStats(dist []clickhouse.ScoreCount) Stats {
	st := Stats{CountPerRank: map[string]int64{}}
	for _, r := range schemas.Ranks() {
		st.CountPerRank[r] = 0
	}
	var sum int64
	for _, d := range dist {
		st.CountPerRank[d.Rank] += d.Users
		st.RankedUsers += d.Users
		sum += d.Score * d.Users
	}
	if st.RankedUsers == 0 {
		return st
	}
	st.MeanScore = float64(sum) / float64(st.RankedUsers)
	at := func(k int64) int64 { // the k-th score (0-based) in ascending order
		for _, d := range dist {
			if k < d.Users {
				return d.Score
			}
			k -= d.Users
		}
		return 0
	}
	n := st.RankedUsers
	if n%2 == 1 {
		st.MedianScore = float64(at(n / 2))
	} else {
		st.MedianScore = float64(at(n/2-1)+at(n/2)) / 2
	}
	return st
}

// stats answers the statistics from the analytics copy; 503 when it does
// not answer.
func (h *Handlers) stats(c *fiber.Ctx, _ *server.NoRequest) error {
	now := h.now().UTC().Truncate(time.Second)
	dist, recent, err := h.analytics.Distribution(c.UserContext(), now.Add(-24*time.Hour))
	if err != nil {
		return unavailable()
	}
	st := ComputeStats(dist)
	st.EventsLast24h, st.AsOf, st.Source = recent, now.Format(time.RFC3339), "clickhouse"
	return c.JSON(st)
}
