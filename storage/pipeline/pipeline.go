// Package pipeline stores what the command pipeline needs in Postgres: the
// applied command ids with their replies, and the transactional outbox.
package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/topics"
)

// Processed is a command that was applied, with the reply it produced.
type Processed struct {
	CommandID   string
	CommandType string
	RequestHash string
	Status      int
	Body        []byte
}

const lookupProcessedSQL = `
SELECT command_id, command_type, request_hash, status, body
FROM processed_commands WHERE command_id = ANY($1)`

// LookupProcessed returns the applied commands among ids, by id.
func LookupProcessed(ctx context.Context, q postgres.Querier, ids []string) (map[string]Processed, error) {
	out := make(map[string]Processed)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, lookupProcessedSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("lookup processed commands: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p Processed
		if err := rows.Scan(&p.CommandID, &p.CommandType, &p.RequestHash, &p.Status, &p.Body); err != nil {
			return nil, fmt.Errorf("scan processed command: %w", err)
		}
		out[p.CommandID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lookup processed commands: %w", err)
	}
	return out, nil
}

// InsertProcessed records applied commands. A command id that is already
// there fails the whole transaction with a unique violation: that only
// happens when another consumer applied it concurrently, and the batch must
// then be retried, not applied twice.
func InsertProcessed(ctx context.Context, q postgres.Querier, rows []Processed) error {
	if len(rows) == 0 {
		return nil
	}
	now := time.Now().UTC()
	_, err := q.CopyFrom(ctx, pgx.Identifier{"processed_commands"},
		[]string{"command_id", "command_type", "request_hash", "status", "body", "created_at"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.CommandID, r.CommandType, r.RequestHash, r.Status, r.Body, now}, nil
		}))
	if err != nil {
		return fmt.Errorf("record %d processed commands: %w", len(rows), err)
	}
	return nil
}

// DeleteProcessedBefore forgets applied commands older than t (the
// idempotency window), returning how many it removed.
func DeleteProcessedBefore(ctx context.Context, q postgres.Querier, t time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM processed_commands WHERE created_at < $1`, t)
	if err != nil {
		return 0, fmt.Errorf("expire processed commands: %w", err)
	}
	return tag.RowsAffected(), nil
}

// OutboxRow is one record waiting to be published.
type OutboxRow struct {
	ID      int64
	Topic   string
	Key     string
	Type    string
	EventID string
	Payload []byte
}

// InsertOutbox queues records in the caller's transaction.
func InsertOutbox(ctx context.Context, q postgres.Querier, rows []OutboxRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := q.CopyFrom(ctx, pgx.Identifier{"outbox"},
		[]string{"topic", "key", "event_type", "event_id", "payload"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.Topic, r.Key, r.Type, r.EventID, r.Payload}, nil
		}))
	if err != nil {
		return fmt.Errorf("queue %d outbox rows: %w", len(rows), err)
	}
	return nil
}

// FetchOutbox returns up to limit queued records in insertion order.
func FetchOutbox(ctx context.Context, q postgres.Querier, limit int) ([]OutboxRow, error) {
	rows, err := q.Query(ctx, `SELECT id, topic, key, event_type, event_id, payload FROM outbox ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxRow
	for rows.Next() {
		var r OutboxRow
		if err := rows.Scan(&r.ID, &r.Topic, &r.Key, &r.Type, &r.EventID, &r.Payload); err != nil {
			return nil, fmt.Errorf("scan outbox row: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	return out, nil
}

// DeleteOutbox removes published records.
func DeleteOutbox(ctx context.Context, q postgres.Querier, ids []int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM outbox WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("delete %d published outbox rows: %w", len(ids), err)
	}
	return nil
}

// EventRow encodes an envelope as the outbox row that publishes it to topic.
func EventRow(topic string, env schemas.Envelope) (OutboxRow, error) {
	rec, err := topics.Record(topic, env)
	if err != nil {
		return OutboxRow{}, err
	}
	return OutboxRow{Topic: topic, Key: env.Key, Type: env.Type, EventID: env.ID, Payload: rec.Value}, nil
}
