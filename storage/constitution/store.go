// Package constitution stores constitution scenarios, the planet catalog of
// published artifacts with their votes and comments, and the per-user
// monthly AI request counters. The gateway writes here directly (a low write
// rate, no balances); every created scenario and artifact queues its event in
// the outbox in the same transaction.
package constitution

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// Record is a scenario or an artifact row (the two share their columns;
// ScenarioID is set only on artifacts made from a scenario).
type Record struct {
	ID         string
	UserID     string
	ScenarioID string
	Title      string
	Sliders    schemas.Sliders
	Regime     string
	Metrics    schemas.Metrics
	Tags       []string
	CreatedAt  time.Time
}

// Artifact is a catalog row with its vote and comment counts.
type Artifact struct {
	Record
	Votes    int64
	Comments int64
}

// Similar is an artifact with its Euclidean distance to the reference.
type Similar struct {
	Artifact
	Distance float64
}

// Comment is one comment on an artifact.
type Comment struct {
	ID         string
	ArtifactID string
	UserID     string
	Text       string
	CreatedAt  time.Time
}

// RegimeCount is one row of the catalog statistics.
type RegimeCount struct {
	Regime string
	Count  int64
}

// Store is the module's repository.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the repository.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const sliderCols = `floor, rule_of_law, rotation, transparency, multi_status, skin_in_game, polycentricity, positive_sum`

func recordArgs(r Record) ([]any, error) {
	m, err := json.Marshal(r.Metrics)
	if err != nil {
		return nil, err
	}
	tags := r.Tags
	if tags == nil {
		tags = []string{}
	}
	v := r.Sliders.Values()
	return []any{r.ID, r.UserID, r.Title, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], r.Regime, m, tags, r.CreatedAt}, nil
}

const insertScenarioSQL = `
INSERT INTO constitution_scenarios (id, user_id, title, ` + sliderCols + `, regime, metrics, tags, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`

// CreateScenario inserts the scenario and queues its event in one transaction.
func (s *Store) CreateScenario(ctx context.Context, r Record, event pipeline.OutboxRow) error {
	args, err := recordArgs(r)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertScenarioSQL, args...); err != nil {
			return err
		}
		return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{event})
	})
	if err != nil {
		return fmt.Errorf("create scenario %s: %w", r.ID, postgres.Translate(err))
	}
	return nil
}

const selectScenarioSQL = `SELECT id, user_id, '' AS scenario_id, title, ` + sliderCols + `, regime, metrics, tags, created_at
FROM constitution_scenarios `

// OwnedScenario returns one scenario of userID; another user's scenario is
// postgres.ErrNotFound like a missing one.
func (s *Store) OwnedScenario(ctx context.Context, id, userID string) (Record, error) {
	rows, err := s.pool.Query(ctx, selectScenarioSQL+`WHERE id = $1 AND user_id = $2`, id, userID)
	if err != nil {
		return Record{}, fmt.Errorf("find scenario: %w", err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, scanRecord)
	if err != nil {
		return Record{}, fmt.Errorf("find scenario: %w", postgres.Translate(err))
	}
	return r, nil
}

// ListScenarios returns up to limit scenarios of userID, newest first,
// strictly before the id after when it is set.
func (s *Store) ListScenarios(ctx context.Context, userID, after string, limit int) ([]Record, error) {
	rows, err := s.pool.Query(ctx, selectScenarioSQL+`WHERE user_id = $1 AND ($2 = '' OR id < $2) ORDER BY id DESC LIMIT $3`,
		userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list scenarios: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRecord)
	if err != nil {
		return nil, fmt.Errorf("list scenarios: %w", err)
	}
	return out, nil
}

func scanRecord(row pgx.CollectableRow) (Record, error) {
	var (
		r   Record
		v   [8]int16
		raw []byte
	)
	err := row.Scan(&r.ID, &r.UserID, &r.ScenarioID, &r.Title, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		&r.Regime, &raw, &r.Tags, &r.CreatedAt)
	if err != nil {
		return Record{}, err
	}
	var vi [8]int
	for i, x := range v {
		vi[i] = int(x)
	}
	r.Sliders = schemas.SlidersFrom(vi)
	if err := json.Unmarshal(raw, &r.Metrics); err != nil {
		return Record{}, fmt.Errorf("decode metrics of %s: %w", r.ID, err)
	}
	r.CreatedAt = r.CreatedAt.UTC()
	if r.Tags == nil {
		r.Tags = []string{}
	}
	return r, nil
}

const insertArtifactSQL = `
INSERT INTO planet_artifacts (id, user_id, title, ` + sliderCols + `, regime, metrics, tags, created_at, scenario_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, NULLIF($16, ''))`

// CreateArtifact inserts the artifact and queues its event in one transaction.
func (s *Store) CreateArtifact(ctx context.Context, r Record, event pipeline.OutboxRow) error {
	args, err := recordArgs(r)
	if err != nil {
		return err
	}
	args = append(args, r.ScenarioID)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertArtifactSQL, args...); err != nil {
			return err
		}
		return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{event})
	})
	if err != nil {
		return fmt.Errorf("create artifact %s: %w", r.ID, postgres.Translate(err))
	}
	return nil
}

const artifactCols = `a.id, a.user_id, coalesce(a.scenario_id, ''), a.title, a.floor, a.rule_of_law, a.rotation,
a.transparency, a.multi_status, a.skin_in_game, a.polycentricity, a.positive_sum, a.regime, a.metrics, a.tags, a.created_at,
(SELECT count(*) FROM planet_votes v WHERE v.artifact_id = a.id),
(SELECT count(*) FROM planet_comments c WHERE c.artifact_id = a.id)`

func scanArtifact(row pgx.CollectableRow) (Artifact, error) {
	var (
		a   Artifact
		v   [8]int16
		raw []byte
	)
	err := row.Scan(&a.ID, &a.UserID, &a.ScenarioID, &a.Title, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		&a.Regime, &raw, &a.Tags, &a.CreatedAt, &a.Votes, &a.Comments)
	if err != nil {
		return Artifact{}, err
	}
	var vi [8]int
	for i, x := range v {
		vi[i] = int(x)
	}
	a.Sliders = schemas.SlidersFrom(vi)
	if err := json.Unmarshal(raw, &a.Metrics); err != nil {
		return Artifact{}, fmt.Errorf("decode metrics of %s: %w", a.ID, err)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if a.Tags == nil {
		a.Tags = []string{}
	}
	return a, nil
}

// Artifact returns one artifact or postgres.ErrNotFound.
func (s *Store) Artifact(ctx context.Context, id string) (Artifact, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+artifactCols+` FROM planet_artifacts a WHERE a.id = $1`, id)
	if err != nil {
		return Artifact{}, fmt.Errorf("find artifact: %w", err)
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanArtifact)
	if err != nil {
		return Artifact{}, fmt.Errorf("find artifact: %w", postgres.Translate(err))
	}
	return a, nil
}

// ListArtifacts returns up to limit artifacts, newest first, of one regime
// when regime is set, strictly before the id after when it is set.
func (s *Store) ListArtifacts(ctx context.Context, regime, after string, limit int) ([]Artifact, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+artifactCols+` FROM planet_artifacts a
WHERE ($1 = '' OR a.regime = $1) AND ($2 = '' OR a.id < $2) ORDER BY a.id DESC LIMIT $3`, regime, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanArtifact)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	return out, nil
}

// squaredDistance is the squared Euclidean distance between the sliders of
// a (a candidate) and t (the reference), an exact integer.
const squaredDistance = `((a.floor - t.floor)^2 + (a.rule_of_law - t.rule_of_law)^2 + (a.rotation - t.rotation)^2 +
 (a.transparency - t.transparency)^2 + (a.multi_status - t.multi_status)^2 + (a.skin_in_game - t.skin_in_game)^2 +
 (a.polycentricity - t.polycentricity)^2 + (a.positive_sum - t.positive_sum)^2)`

// squaredDistanceInt casts the distance to an integer so that ordering and
// ties are exact (^ on smallint yields double precision, exact below 2^53).
const squaredDistanceInt = `(` + squaredDistance + `)::bigint`

// Similar returns the limit artifacts nearest to artifact id by the
// Euclidean distance of their sliders, never id itself, nearest first, ties
// by id. An unknown id is postgres.ErrNotFound. The database orders the
// catalog; only the answer is loaded.
func (s *Store) Similar(ctx context.Context, id string, limit int) ([]Similar, error) {
	if _, err := s.Artifact(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+artifactCols+`, `+squaredDistanceInt+` AS d2
FROM planet_artifacts t JOIN planet_artifacts a ON a.id <> t.id
WHERE t.id = $1
ORDER BY d2, a.id
LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("similar artifacts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Similar, error) {
		var (
			a   Artifact
			v   [8]int16
			raw []byte
			d2  int64
		)
		err := row.Scan(&a.ID, &a.UserID, &a.ScenarioID, &a.Title, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
			&a.Regime, &raw, &a.Tags, &a.CreatedAt, &a.Votes, &a.Comments, &d2)
		if err != nil {
			return Similar{}, err
		}
		var vi [8]int
		for i, x := range v {
			vi[i] = int(x)
		}
		a.Sliders = schemas.SlidersFrom(vi)
		if err := json.Unmarshal(raw, &a.Metrics); err != nil {
			return Similar{}, err
		}
		a.CreatedAt = a.CreatedAt.UTC()
		if a.Tags == nil {
			a.Tags = []string{}
		}
		return Similar{Artifact: a, Distance: math.Sqrt(float64(d2))}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("similar artifacts: %w", err)
	}
	return out, nil
}

// Stats counts the catalog, by regime (largest first, then by name).
func (s *Store) Stats(ctx context.Context) (int64, []RegimeCount, error) {
	rows, err := s.pool.Query(ctx, `SELECT regime, count(*) FROM planet_artifacts GROUP BY regime ORDER BY count(*) DESC, regime`)
	if err != nil {
		return 0, nil, fmt.Errorf("artifact stats: %w", err)
	}
	by, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RegimeCount, error) {
		var c RegimeCount
		return c, row.Scan(&c.Regime, &c.Count)
	})
	if err != nil {
		return 0, nil, fmt.Errorf("artifact stats: %w", err)
	}
	var total int64
	for _, c := range by {
		total += c.Count
	}
	return total, by, nil
}

// Vote records userID's vote on the artifact; it reports whether the vote
// is new (false when the user had voted already). An unknown artifact is
// postgres.ErrNotFound.
func (s *Store) Vote(ctx context.Context, artifactID, userID string, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO planet_votes (artifact_id, user_id, created_at)
SELECT id, $2, $3 FROM planet_artifacts WHERE id = $1
ON CONFLICT (artifact_id, user_id) DO NOTHING`, artifactID, userID, now)
	if err != nil {
		return false, fmt.Errorf("vote: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	if _, err := s.Artifact(ctx, artifactID); err != nil {
		return false, err
	}
	return false, nil
}

// Unvote removes userID's vote, if any. An unknown artifact is
// postgres.ErrNotFound.
func (s *Store) Unvote(ctx context.Context, artifactID, userID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM planet_votes WHERE artifact_id = $1 AND user_id = $2`, artifactID, userID); err != nil {
		return fmt.Errorf("unvote: %w", err)
	}
	_, err := s.Artifact(ctx, artifactID)
	return err
}

// Social returns an artifact's vote count, whether userID voted, and a
// page of its comments oldest first, by creation time then id: those
// after `after` (the zero position: from the first), at most limit of them (0 reads none). An
// unknown artifact is postgres.ErrNotFound.
func (s *Store) Social(ctx context.Context, artifactID, userID string, after schemas.Position, limit int) (int64, bool, []Comment, error) {
	var votes int64
	var voted bool
	err := s.pool.QueryRow(ctx, `SELECT
 (SELECT count(*) FROM planet_votes WHERE artifact_id = a.id),
 EXISTS (SELECT 1 FROM planet_votes WHERE artifact_id = a.id AND user_id = $2)
FROM planet_artifacts a WHERE a.id = $1`, artifactID, userID).Scan(&votes, &voted)
	if err != nil {
		return 0, false, nil, fmt.Errorf("social: %w", postgres.Translate(err))
	}
	if limit <= 0 {
		return votes, voted, nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, artifact_id, user_id, body, created_at FROM planet_comments
WHERE artifact_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`,
		artifactID, after.At, after.ID, limit)
	if err != nil {
		return 0, false, nil, fmt.Errorf("comments: %w", err)
	}
	comments, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Comment, error) {
		var c Comment
		err := row.Scan(&c.ID, &c.ArtifactID, &c.UserID, &c.Text, &c.CreatedAt)
		c.CreatedAt = c.CreatedAt.UTC()
		return c, err
	})
	if err != nil {
		return 0, false, nil, fmt.Errorf("comments: %w", err)
	}
	return votes, voted, comments, nil
}

// AddComment stores a comment. An unknown artifact is postgres.ErrNotFound.
func (s *Store) AddComment(ctx context.Context, c Comment) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO planet_comments (id, artifact_id, user_id, body, created_at)
SELECT $1, id, $3, $4, $5 FROM planet_artifacts WHERE id = $2`, c.ID, c.ArtifactID, c.UserID, c.Text, c.CreatedAt)
	if err != nil {
		return fmt.Errorf("comment: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("comment on %s: %w", c.ArtifactID, postgres.ErrNotFound)
	}
	return nil
}

// PeriodStart is the first instant of the calendar month (UTC) of t.
func PeriodStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// TakeAIRequest counts one AI request of userID in the month of now if fewer
// than limit were counted; it returns the count after the request and
// whether it was allowed. One conditional upsert decides, so concurrent
// requests never exceed the limit.
func (s *Store) TakeAIRequest(ctx context.Context, userID string, now time.Time, limit int64) (int64, bool, error) {
	if limit <= 0 {
		used, err := s.AIUsage(ctx, userID, now)
		return used, false, err
	}
	var used int64
	err := s.pool.QueryRow(ctx, `INSERT INTO constitution_ai_usage AS u (user_id, period, used) VALUES ($1, $2, 1)
ON CONFLICT (user_id, period) DO UPDATE SET used = u.used + 1 WHERE u.used < $3
RETURNING used`, userID, PeriodStart(now), limit).Scan(&used)
	if err == pgx.ErrNoRows {
		used, err := s.AIUsage(ctx, userID, now)
		return used, false, err
	}
	if err != nil {
		return 0, false, fmt.Errorf("count ai request: %w", err)
	}
	return used, true, nil
}

// AIUsage returns how many AI requests userID made in the month of now.
func (s *Store) AIUsage(ctx context.Context, userID string, now time.Time) (int64, error) {
	var used int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT used FROM constitution_ai_usage WHERE user_id = $1 AND period = $2), 0)`,
		userID, PeriodStart(now)).Scan(&used)
	if err != nil {
		return 0, fmt.Errorf("ai usage: %w", err)
	}
	return used, nil
}
