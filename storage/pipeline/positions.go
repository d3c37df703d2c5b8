package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fintech/platform/storage/postgres"
)

// Position is the next offset a consumer group applies on one partition.
type Position struct {
	Topic     string
	Partition int32
	Next      int64
	// First is the batch's first offset on the partition, and Held says the
	// consumer stored or loaded a position there: saving refuses a stored
	// position below First, or none where Held (FencedError).
	First int64
	Held  bool
}

// advancePositionsSQL checks and advances a group's positions in one
// statement (migration 0245): positions only move forward (GREATEST), a
// batch redelivered behind a stored position must not move it back, and a
// stored position below a batch's first offset fails the transaction with
// SQLSTATE PF001. Only an accepted gap sets one back (AcceptGap).
const advancePositionsSQL = `SELECT consumer_positions_advance($1, $2, $3, $4, $5, $6)`

// fencedCode is the SQLSTATE consumer_positions_advance raises.
const fencedCode = "PF001"

// FencedError is a batch refused because the database has not applied the
// records before it: Behind are the stored positions (Next -1: none) of its
// partitions that are below the batch's first offset.
type FencedError struct {
	Group  string
	Behind []Position
}

func (e *FencedError) Error() string {
	parts := make([]string, len(e.Behind))
	for i, p := range e.Behind {
		parts[i] = fmt.Sprintf("%s/%d at %d", p.Topic, p.Partition, p.Next)
	}
	return fmt.Sprintf("consumer group %s is fenced: the database stands behind the batch on %s", e.Group, strings.Join(parts, ", "))
}

// Fenced returns the FencedError that err carries, if it is the fence's
// refusal.
func Fenced(err error) (*FencedError, bool) {
	var fe *FencedError
	if errors.As(err, &fe) {
		return fe, true
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != fencedCode {
		return nil, false
	}
	var behind []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Next      int64  `json:"next"`
	}
	fe = &FencedError{}
	if jerr := json.Unmarshal([]byte(pgErr.Detail), &behind); jerr != nil {
		return fe, true // fenced all the same; the caller seeks its whole batch back
	}
	for _, b := range behind {
		fe.Behind = append(fe.Behind, Position{Topic: b.Topic, Partition: b.Partition, Next: b.Next})
	}
	return fe, true
}

func positionArgs(group string, ps []Position) []any {
	tps, parts := make([]string, len(ps)), make([]int32, len(ps))
	first, next, held := make([]int64, len(ps)), make([]int64, len(ps)), make([]bool, len(ps))
	for i, p := range ps {
		tps[i], parts[i], first[i], next[i], held[i] = p.Topic, p.Partition, p.First, p.Next, p.Held
	}
	return []any{group, tps, parts, first, next, held}
}

// QueueSavePositions queues the fenced advance of a group's positions on b,
// to be sent with the statements of the transaction that applies the
// batch: when the fence refuses it, the transaction fails with an error
// Fenced recognizes.
func QueueSavePositions(b *pgx.Batch, group string, ps []Position) {
	if len(ps) == 0 {
		return
	}
	b.Queue(advancePositionsSQL, positionArgs(group, ps)...)
}

// SavePositions stores a group's positions on its own, fenced as
// QueueSavePositions: a refusal returns a *FencedError.
func SavePositions(ctx context.Context, q postgres.Querier, group string, ps []Position) error {
	if len(ps) == 0 {
		return nil
	}
	if _, err := q.Exec(ctx, advancePositionsSQL, positionArgs(group, ps)...); err != nil {
		if fe, ok := Fenced(err); ok {
			fe.Group = group
			return fe
		}
		return fmt.Errorf("save positions of %s: %w", group, err)
	}
	return nil
}

// LoadPositions returns a group's stored positions: topic -> partition ->
// next offset.
func LoadPositions(ctx context.Context, q postgres.Querier, group string) (map[string]map[int32]int64, error) {
	rows, err := q.Query(ctx, `SELECT topic, partition, next_offset FROM consumer_positions WHERE group_name = $1`, group)
	if err != nil {
		return nil, fmt.Errorf("load positions of %s: %w", group, err)
	}
	return scanPositions(rows)
}

// PositionFloor returns, per topic partition, the lowest next offset any
// group stored: the embedded broker keeps every record from there on.
func PositionFloor(ctx context.Context, q postgres.Querier) (map[string]map[int32]int64, error) {
	rows, err := q.Query(ctx, `SELECT topic, partition, min(next_offset) FROM consumer_positions GROUP BY topic, partition`)
	if err != nil {
		return nil, fmt.Errorf("read the position floor: %w", err)
	}
	return scanPositions(rows)
}

// AllPositions returns every stored position: group -> positions.
func AllPositions(ctx context.Context, q postgres.Querier) (map[string][]Position, error) {
	rows, err := q.Query(ctx, `SELECT group_name, topic, partition, next_offset FROM consumer_positions ORDER BY 1, 2, 3`)
	if err != nil {
		return nil, fmt.Errorf("read positions: %w", err)
	}
	defer rows.Close()
	out := map[string][]Position{}
	for rows.Next() {
		var g string
		var p Position
		if err := rows.Scan(&g, &p.Topic, &p.Partition, &p.Next); err != nil {
			return nil, fmt.Errorf("scan position: %w", err)
		}
		out[g] = append(out[g], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read positions: %w", err)
	}
	return out, nil
}

func scanPositions(rows pgx.Rows) (map[string]map[int32]int64, error) {
	defer rows.Close()
	out := map[string]map[int32]int64{}
	for rows.Next() {
		var topic string
		var part int32
		var next int64
		if err := rows.Scan(&topic, &part, &next); err != nil {
			return nil, fmt.Errorf("scan position: %w", err)
		}
		if out[topic] == nil {
			out[topic] = map[int32]int64{}
		}
		out[topic][part] = next
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read positions: %w", err)
	}
	return out, nil
}

// Gap is a stretch of a partition a group cannot apply: the records from
// Stored were trimmed (the log now starts at ResumeAt), or the partition
// ends before Stored (it lost records or was recreated).
type Gap struct {
	Group     string
	Topic     string
	Partition int32
	Stored    int64
	ResumeAt  int64
	// From and To are the missing offsets (inclusive); Reason says why.
	From, To int64
	Reason   string
}

// Beginner starts a transaction (a pool).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// AcceptGap records that an operator accepted a gap and moves the group's
// position to where it resumes, in one transaction.
func AcceptGap(ctx context.Context, db Beginner, g Gap, by string) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
INSERT INTO consumer_gap_accepts (group_name, topic, partition, stored, resumed_at, reason, accepted_by)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, g.Group, g.Topic, g.Partition, g.Stored, g.ResumeAt, g.Reason, by); err != nil {
			return fmt.Errorf("audit the accepted gap: %w", err)
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO consumer_positions (group_name, topic, partition, next_offset) VALUES ($1, $2, $3, $4)
ON CONFLICT (group_name, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
			g.Group, g.Topic, g.Partition, g.ResumeAt); err != nil {
			return fmt.Errorf("move the position past the gap: %w", err)
		}
		return nil
	})
}
