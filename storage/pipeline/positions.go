package pipeline

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/storage/postgres"
)

// Position is the next offset a consumer group applies on one partition.
type Position struct {
	Topic     string
	Partition int32
	Next      int64
}

// Positions only move forward here: a batch redelivered behind a stored
// position must not move it back. Only an accepted gap sets one
// (AcceptGap).
const upsertPositionsSQL = `
INSERT INTO consumer_positions AS p (group_name, topic, partition, next_offset)
SELECT $1, v.topic, v.partition, v.next_offset
FROM unnest($2::text[], $3::int[], $4::bigint[]) AS v(topic, partition, next_offset)
ON CONFLICT (group_name, topic, partition)
DO UPDATE SET next_offset = GREATEST(p.next_offset, EXCLUDED.next_offset)`

func positionArgs(group string, ps []Position) []any {
	tps, parts, next := make([]string, len(ps)), make([]int32, len(ps)), make([]int64, len(ps))
	for i, p := range ps {
		tps[i], parts[i], next[i] = p.Topic, p.Partition, p.Next
	}
	return []any{group, tps, parts, next}
}

// QueueSavePositions queues the upsert of a group's positions on b, to be
// sent with the statements of the transaction that applies the batch.
func QueueSavePositions(b *pgx.Batch, group string, ps []Position) {
	if len(ps) == 0 {
		return
	}
	b.Queue(upsertPositionsSQL, positionArgs(group, ps)...)
}

// SavePositions stores a group's positions on its own.
func SavePositions(ctx context.Context, q postgres.Querier, group string, ps []Position) error {
	if len(ps) == 0 {
		return nil
	}
	if _, err := q.Exec(ctx, upsertPositionsSQL, positionArgs(group, ps)...); err != nil {
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
