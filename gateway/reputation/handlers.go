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

// Deps are the handlers' dependencies.
type Deps struct {
	DB        platform.Pinger
	Reads     Reader
	Analytics Analytics
	Bus       Sender
	Tokens    *auth.Tokens
	// ServiceKey is the shared secret of X-Reputation-Service-Key; empty
	// disables the header.
	ServiceKey string
	// Admin admits reputation admins (verified e-mail on the allowlist) after
	// the bearer-token check; they may post events with their JWT.
	Admin  fiber.Handler
	Now    func() time.Time
	Routes func() []server.Route
}

// Handlers serve /api/reputation.
type Handlers struct {
	d Deps
}

// NewHandlers checks the dependencies and builds the handlers.
func NewHandlers(d Deps) (*Handlers, error) {
	if d.DB == nil || d.Reads == nil || d.Analytics == nil || d.Bus == nil || d.Tokens == nil || d.Admin == nil || d.Now == nil {
		return nil, errors.New("reputation handlers: nil dependency")
	}
	if d.ServiceKey != "" && len(d.ServiceKey) < 32 {
		return nil, errors.New("reputation service key: must be at least 32 characters")
	}
	return &Handlers{d: d}, nil
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	g.Get("/health", "Liveness, database reachability, ranked-user count", platform.Health(h.d.DB, h.health))
	g.Post("/events", ratelimit.Write, "Add a weighted event to a user's score (service key or admin JWT)", h.authorize, h.post)
	g.Get("/me", "The caller's score, rank and last 50 events", h.d.Tokens.Require(), h.me)
	g.Get("/leaderboard", "Top users by score; query limit (<= 100), rank, since", h.leaderboard)
	g.Get("/rank/:userId", "A user's public rank and score", h.rank)
	g.Get("/stats", "Users per rank, mean and median score, events in 24h", h.stats)
	g.Get("/openapi.json", "OpenAPI 3.0 slice of this module", openapi.Handler(h.d.Routes, openAPIDoc))
}

func (h *Handlers) health(ctx context.Context) (map[string]any, error) {
	n, err := h.d.Reads.RankedUsers(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"rankedUsers": n}, nil
}

const actorKey = "reputation.actor"

// authorize admits the service key (constant-time compare) or a JWT of an
// e-mail on the reputation admin allowlist.
func (h *Handlers) authorize(c *fiber.Ctx) error {
	if key := c.Get(HeaderServiceKey); key != "" {
		if h.d.ServiceKey == "" || len(key) < 32 ||
			subtle.ConstantTimeCompare([]byte(key), []byte(h.d.ServiceKey)) != 1 {
			return apierr.KeyInvalid()
		}
		c.Locals(actorKey, "service")
		return c.Next()
	}
	tok, ok := auth.BearerToken(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return apierr.AuthRequired()
	}
	p, err := h.d.Tokens.Verify(tok)
	if err != nil {
		return apierr.AuthRequired()
	}
	auth.SetUser(c, p)
	c.Locals(actorKey, p.UserID)
	return h.d.Admin(c)
}

type eventRequest struct {
	UserID       string         `json:"userId"`
	Kind         string         `json:"kind"`
	SourceModule string         `json:"sourceModule"`
	Weight       *weight        `json:"weight"`
	SourceID     string         `json:"sourceId"`
	Meta         map[string]any `json:"meta"`
}

// weight keeps the raw JSON of the weight so that only an integer literal
// passes (a string or a fraction is a validation failure, not a JSON error).
type weight []byte

// UnmarshalJSON records the raw value.
func (w *weight) UnmarshalJSON(b []byte) error {
	*w = append((*w)[:0], b...)
	return nil
}

func validText(v *bind.Validator, field, s string, max int) {
	v.MaxLen(field, s, max)
	v.Check(utf8.ValidString(s) && !strings.ContainsRune(s, 0), field, "must be valid text without NUL characters")
}

func (h *Handlers) post(c *fiber.Ctx) error {
	var req eventRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	if v.Required("userId", req.UserID) {
		validText(&v, "userId", req.UserID, 128)
	}
	if v.Required("kind", req.Kind) {
		validText(&v, "kind", req.Kind, schemas.ReputationMaxKind)
	}
	if v.Required("sourceModule", req.SourceModule) {
		validText(&v, "sourceModule", req.SourceModule, schemas.ReputationMaxModule)
	}
	validText(&v, "sourceId", req.SourceID, schemas.ReputationMaxSourceID)
	var weight int64
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
		weight = n
	}
	if req.Meta != nil {
		if b, err := json.Marshal(req.Meta); err != nil || len(b) > schemas.ReputationMaxMeta {
			v.Fail("meta", "must be a JSON object of at most 16 KiB")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	actor, _ := c.Locals(actorKey).(string)
	env, err := schemas.New(schemas.TypeReputationEvent, req.UserID, actor, schemas.ReputationEvent{
		UserID: req.UserID, Kind: req.Kind, SourceModule: req.SourceModule, Weight: weight,
		SourceID: req.SourceID, Meta: req.Meta}, h.d.Now())
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.d.Bus, topics.ReputationCommands, env,
		commands.RequestIdempotency(c, actor, "POST "+Prefix+"/events"))
}

type eventJSON struct {
	ID           string          `json:"id"`
	Kind         string          `json:"kind"`
	SourceModule string          `json:"sourceModule"`
	Weight       int64           `json:"weight"`
	SourceID     *string         `json:"sourceId"`
	Meta         json.RawMessage `json:"meta"`
	ScoreAfter   int64           `json:"scoreAfter"`
	RankAfter    string          `json:"rankAfter"`
	CreatedAt    time.Time       `json:"createdAt"`
}

type meResponse struct {
	UserID string      `json:"userId"`
	Score  int64       `json:"score"`
	Rank   string      `json:"rank"`
	Events []eventJSON `json:"events"`
}

func (h *Handlers) me(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	ctx := c.UserContext()
	sc, found, err := h.d.Reads.ScoreOf(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !found {
		sc.Rank = schemas.RankOf(0)
	}
	es, err := h.d.Reads.Recent(ctx, p.UserID, 50)
	if err != nil {
		return err
	}
	out := meResponse{UserID: p.UserID, Score: sc.Score, Rank: sc.Rank, Events: make([]eventJSON, 0, len(es))}
	for _, e := range es {
		j := eventJSON{ID: e.ID, Kind: e.Kind, SourceModule: e.SourceModule, Weight: e.Weight,
			ScoreAfter: e.ScoreAfter, RankAfter: e.RankAfter, CreatedAt: e.CreatedAt.UTC()}
		if e.SourceID != "" {
			s := e.SourceID
			j.SourceID = &s
		}
		if e.Meta != nil {
			j.Meta = json.RawMessage(e.Meta)
		}
		out.Events = append(out.Events, j)
	}
	return c.JSON(out)
}

type leaderboardResponse struct {
	Items  []clickhouse.LeaderRow `json:"items"`
	Limit  int                    `json:"limit"`
	Rank   *string                `json:"rank"`
	Since  *string                `json:"since"`
	Source string                 `json:"source"`
}

func (h *Handlers) leaderboard(c *fiber.Ctx) error {
	q := clickhouse.LeaderQuery{Limit: 50}
	var v bind.Validator
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		v.Check(err == nil && n >= 1, "limit", "must be a positive integer")
		q.Limit = min(max(n, 1), MaxLeaderboard)
	}
	out := leaderboardResponse{Source: "clickhouse"}
	if r := c.Query("rank"); r != "" {
		v.OneOf("rank", r, schemas.Ranks()...)
		q.Rank = r
		out.Rank = &q.Rank
	}
	if s := c.Query("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		v.Check(err == nil, "since", "must be an ISO 8601 timestamp such as 2026-01-02T15:04:05Z")
		q.Since = &t
		f := t.UTC().Format(time.RFC3339)
		out.Since = &f
	}
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.d.Analytics.Leaderboard(c.UserContext(), q)
	if err != nil {
		return unavailable()
	}
	out.Items, out.Limit = rows, q.Limit
	return c.JSON(out)
}

func unavailable() error {
	return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reputation analytics are unavailable; retry shortly")
}

type rankResponse struct {
	UserID string `json:"userId"`
	Score  int64  `json:"score"`
	Rank   string `json:"rank"`
}

func (h *Handlers) rank(c *fiber.Ctx) error {
	id := c.Params("userId")
	notFound := apierr.New(http.StatusNotFound, schemas.CodeUserNotFound, "no user with this id")
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) || len(id) > 128 {
		return notFound
	}
	ctx := c.UserContext()
	sc, found, err := h.d.Reads.ScoreOf(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		ok, err := h.d.Reads.UserExists(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return notFound
		}
		sc.Rank = schemas.RankOf(0)
	}
	return c.JSON(rankResponse{UserID: id, Score: sc.Score, Rank: sc.Rank})
}

// Stats are the reputation statistics.
type Stats struct {
	RankedUsers   int64            `json:"rankedUsers"`
	CountPerRank  map[string]int64 `json:"countPerRank"`
	MeanScore     float64          `json:"meanScore"`
	MedianScore   float64          `json:"medianScore"`
	EventsLast24h int64            `json:"eventsLast24h"`
	AsOf          string           `json:"asOf"`
	Source        string           `json:"source"`
}

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

func (h *Handlers) stats(c *fiber.Ctx) error {
	now := h.d.Now().UTC().Truncate(time.Second)
	dist, recent, err := h.d.Analytics.Distribution(c.UserContext(), now.Add(-24*time.Hour))
	if err != nil {
		return unavailable()
	}
	st := ComputeStats(dist)
	st.EventsLast24h, st.AsOf, st.Source = recent, now.Format(time.RFC3339), "clickhouse"
	return c.JSON(st)
}
