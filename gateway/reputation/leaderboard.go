package reputation

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

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
