// Package reputation stores users' scores and the events applied to them.
package reputation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/postgres"
)

// Score is a user's current score.
type Score struct {
	UserID     string
	Score      int64
	Rank       string
	EventCount int64
	UpdatedAt  time.Time
}

// Event is one applied reputation event with the score it left.
type Event struct {
	ID           string
	UserID       string
	Kind         string
	SourceModule string
	Weight       int64
	SourceID     string // "" when the emitter gave none
	Meta         []byte // JSON object or nil
	ScoreAfter   int64
	RankBefore   string
	RankAfter    string
	Seq          int64
	CreatedAt    time.Time
}

// ExistingUsers returns which of ids are users.
func ExistingUsers(ctx context.Context, q postgres.Querier, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return map[string]bool{}, nil
	}
	out, err := postgres.StringSet(ctx, q, `SELECT id FROM users WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("find users: %w", err)
	}
	return out, nil
}

// WalletOwners maps the fiat wallets among ids to their owners' user ids.
func WalletOwners(ctx context.Context, q postgres.Querier, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT id, user_id FROM fiat_wallets WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("find wallet owners: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, user string
		if err := rows.Scan(&id, &user); err != nil {
			return nil, fmt.Errorf("scan wallet owner: %w", err)
		}
		out[id] = user
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find wallet owners: %w", err)
	}
	return out, nil
}

const lockScoresSQL = `SELECT user_id, score, rank, event_count, updated_at FROM reputation_scores
WHERE user_id = ANY($1) ORDER BY user_id FOR UPDATE`

// createScoresSQL gives every user without a score row a zero one, in user
// id order (two appliers wait for each other's rows in one order, so they
// never deadlock). A row another transaction inserted and has not committed
// makes this one wait for it, then skip it.
const createScoresSQL = `
INSERT INTO reputation_scores (user_id, score, rank, event_count, updated_at)
SELECT u, 0, $2, 0, $3 FROM unnest($1::text[]) AS u ORDER BY u
ON CONFLICT (user_id) DO NOTHING`

// LockScores reads the scores of users and locks them until tx ends, in
// user id order so that two appliers never deadlock. A user without a
// score row first gets a zero one: FOR UPDATE locks only rows that exist,
// so two appliers crediting a new user would otherwise both read "no
// score" and the second write would overwrite the first. The transaction
// must be READ COMMITTED, so that the locking read sees a row another
// applier committed while this one waited for it. users must be existing
// users; now stamps the rows it creates.
func LockScores(ctx context.Context, tx pgx.Tx, users []string, zeroRank string, now time.Time) (map[string]Score, error) {
	if len(users) == 0 {
		return map[string]Score{}, nil
	}
	if _, err := tx.Exec(ctx, createScoresSQL, users, zeroRank, now); err != nil {
		return nil, fmt.Errorf("create missing scores: %w", err)
	}
	rows, err := tx.Query(ctx, lockScoresSQL, users)
	if err != nil {
		return nil, fmt.Errorf("lock scores: %w", err)
	}
	defer rows.Close()
	out := map[string]Score{}
	for rows.Next() {
		var s Score
		if err := rows.Scan(&s.UserID, &s.Score, &s.Rank, &s.EventCount, &s.UpdatedAt); err != nil {
			return nil, fmt.Errorf("lock scores: %w", err)
		}
		out[s.UserID] = s
	}
	return out, rows.Err()
}

// SourceKey names the originating record of an event for one user.
type SourceKey struct{ UserID, Kind, SourceID string }

const eventColumns = `id, user_id, kind, source_module, weight, coalesce(source_id, ''), meta,
	score_after, rank_before, rank_after, seq, created_at`

func scanEvent(row pgx.Row) (Event, error) {
	var e Event
	var meta *string
	err := row.Scan(&e.ID, &e.UserID, &e.Kind, &e.SourceModule, &e.Weight, &e.SourceID, &meta,
		&e.ScoreAfter, &e.RankBefore, &e.RankAfter, &e.Seq, &e.CreatedAt)
	if meta != nil {
		e.Meta = []byte(*meta)
	}
	return e, err
}

func collect(rows pgx.Rows) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// BySources returns the events already applied for the given sources.
func BySources(ctx context.Context, q postgres.Querier, keys []SourceKey) (map[SourceKey]Event, error) {
	out := map[SourceKey]Event{}
	if len(keys) == 0 {
		return out, nil
	}
	users, kinds, ids := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		users[i], kinds[i], ids[i] = k.UserID, k.Kind, k.SourceID
	}
	rows, err := q.Query(ctx, `SELECT `+eventColumns+` FROM reputation_events
WHERE source_id IS NOT NULL AND (user_id, kind, source_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`,
		users, kinds, ids)
	if err != nil {
		return nil, fmt.Errorf("find reputation events by source: %w", err)
	}
	es, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("find reputation events by source: %w", err)
	}
	for _, e := range es {
		out[SourceKey{e.UserID, e.Kind, e.SourceID}] = e
	}
	return out, nil
}

// InsertEvents copies applied events in the caller's transaction.
func InsertEvents(ctx context.Context, q postgres.Querier, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"reputation_events"},
		[]string{"id", "user_id", "kind", "source_module", "weight", "source_id", "meta",
			"score_after", "rank_before", "rank_after", "seq", "created_at"},
		pgx.CopyFromSlice(len(events), func(i int) ([]any, error) {
			e := events[i]
			var src *string
			if e.SourceID != "" {
				src = &e.SourceID
			}
			var meta any
			if e.Meta != nil {
				meta = string(e.Meta)
			}
			return []any{e.ID, e.UserID, e.Kind, e.SourceModule, e.Weight, src, meta,
				e.ScoreAfter, e.RankBefore, e.RankAfter, e.Seq, e.CreatedAt}, nil
		}))
	if err != nil {
		return fmt.Errorf("insert %d reputation events: %w", len(events), err)
	}
	return nil
}

const upsertScoresSQL = `
INSERT INTO reputation_scores (user_id, score, rank, event_count, updated_at)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::timestamptz[])
ON CONFLICT (user_id) DO UPDATE SET score = EXCLUDED.score, rank = EXCLUDED.rank,
	event_count = EXCLUDED.event_count, updated_at = EXCLUDED.updated_at`

// UpsertScores writes the new scores; scores must be in user id order.
func UpsertScores(ctx context.Context, q postgres.Querier, scores []Score) error {
	if len(scores) == 0 {
		return nil
	}
	n := len(scores)
	users, vals, ranks, counts, times := make([]string, n), make([]int64, n), make([]string, n), make([]int64, n), make([]time.Time, n)
	for i, s := range scores {
		users[i], vals[i], ranks[i], counts[i], times[i] = s.UserID, s.Score, s.Rank, s.EventCount, s.UpdatedAt
	}
	if _, err := q.Exec(ctx, upsertScoresSQL, users, vals, ranks, counts, times); err != nil {
		return fmt.Errorf("write %d scores: %w", n, err)
	}
	return nil
}

// Store serves the reputation reads.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the read side.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// ScoreOf returns a user's score; found is false when the user has none.
func (s *Store) ScoreOf(ctx context.Context, userID string) (Score, bool, error) {
	var sc Score
	err := s.pool.QueryRow(ctx, `SELECT user_id, score, rank, event_count, updated_at FROM reputation_scores WHERE user_id = $1`, userID).
		Scan(&sc.UserID, &sc.Score, &sc.Rank, &sc.EventCount, &sc.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Score{UserID: userID}, false, nil
	}
	if err != nil {
		return Score{}, false, fmt.Errorf("read score of %s: %w", userID, err)
	}
	return sc, true, nil
}

// UserExists reports whether a user exists.
func (s *Store) UserExists(ctx context.Context, userID string) (bool, error) {
	found, err := ExistingUsers(ctx, s.pool, []string{userID})
	if err != nil {
		return false, err
	}
	return found[userID], nil
}

// Recent returns the user's last limit events, newest first.
func (s *Store) Recent(ctx context.Context, userID string, limit int) ([]Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+eventColumns+` FROM reputation_events WHERE user_id = $1 ORDER BY seq DESC LIMIT $2`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", userID, err)
	}
	es, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", userID, err)
	}
	return es, nil
}

// RankedUsers counts users with a score.
func (s *Store) RankedUsers(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM reputation_scores`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count ranked users: %w", err)
	}
	return n, nil
}
