// Package dlq stores what operators decided about the records parked on the
// <topic>.dlq topics (replayed or discarded), each decision audited in
// dlq_audit in the same transaction. The parked records themselves are
// read from the broker: a DLQ topic keeps them forever at fixed offsets, so
// a record's position is its identity and nothing here can drift from it.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// States of a parked record. A record without a decision is StateParked.
const (
	StateParked    = "parked"
	StateReplayed  = "replayed"
	StateDiscarded = "discarded"
)

// Decision is what an operator last did with one parked record.
type Decision struct {
	RecordID  string
	Topic     string
	Partition int32
	Offset    int64
	State     string
	CommandID string
	Replays   int
	Actor     string
	DecidedAt time.Time
}

// Audit is one row of the dead letters' audit log: a replay or a discard.
type Audit struct {
	ID        string
	RecordID  string
	Action    string // ActionReplay or ActionDiscard
	Actor     string
	Detail    string
	CreatedAt time.Time
}

// Audited actions.
const (
	ActionReplay  = "dlq.replay"
	ActionDiscard = "dlq.discard"
)

// Store reads and writes the decisions.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the store.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const decisionsSQL = `
SELECT record_id, topic, part, "offset", state, command_id, replays, actor, decided_at
FROM dlq_decisions WHERE record_id = ANY($1)`

// Decisions returns the decisions about ids, by record id.
func (s *Store) Decisions(ctx context.Context, ids []string) (map[string]Decision, error) {
	out := make(map[string]Decision, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, decisionsSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("read dlq decisions: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDecision)
	if err != nil {
		return nil, fmt.Errorf("read dlq decisions: %w", err)
	}
	for _, d := range list {
		out[d.RecordID] = d
	}
	return out, nil
}

func scanDecision(r pgx.CollectableRow) (Decision, error) {
	var d Decision
	err := r.Scan(&d.RecordID, &d.Topic, &d.Partition, &d.Offset, &d.State, &d.CommandID, &d.Replays, &d.Actor, &d.DecidedAt)
	return d, err
}

const decidedCountsSQL = `
SELECT d.topic, count(*) FROM dlq_decisions d
JOIN unnest($1::text[], $2::int[], $3::bigint[]) AS s(topic, part, start) ON s.topic = d.topic AND s.part = d.part
WHERE d."offset" >= s.start
GROUP BY d.topic`

// Start is the first offset a DLQ partition still holds.
type Start struct {
	Topic     string
	Partition int32
	Offset    int64
}

// DecidedCounts counts, per DLQ topic, the decided records at or after the
// given start offsets (decisions about records the topic no longer holds do
// not count).
func (s *Store) DecidedCounts(ctx context.Context, starts []Start) (map[string]int64, error) {
	topics := make([]string, len(starts))
	parts := make([]int32, len(starts))
	offs := make([]int64, len(starts))
	for i, st := range starts {
		topics[i], parts[i], offs[i] = st.Topic, st.Partition, st.Offset
	}
	rows, err := s.pool.Query(ctx, decidedCountsSQL, topics, parts, offs)
	if err != nil {
		return nil, fmt.Errorf("count dlq decisions: %w", err)
	}
	out := map[string]int64{}
	var topic string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&topic, &n}, func() error { out[topic] = n; return nil })
	if err != nil {
		return nil, fmt.Errorf("count dlq decisions: %w", err)
	}
	return out, nil
}

// ErrInvalidState means the decision is not allowed from the record's
// current state (a replayed record cannot be discarded, nor replayed again).
var ErrInvalidState = errors.New("dlq record is not in a state that allows this")

const replayedSQL = `
INSERT INTO dlq_decisions (record_id, topic, part, "offset", state, command_id, replays, actor, decided_at)
VALUES ($1, $2, $3, $4, 'replayed', $5, 1, $6, $7)
ON CONFLICT (record_id) DO UPDATE SET state = 'replayed', command_id = EXCLUDED.command_id,
    replays = dlq_decisions.replays + 1, actor = EXCLUDED.actor, decided_at = EXCLUDED.decided_at
    WHERE dlq_decisions.state <> 'replayed'
RETURNING record_id, topic, part, "offset", state, command_id, replays, actor, decided_at`

// MarkReplayed replays d.RecordID once: under a lock on the record it
// refuses a record already replayed (ErrInvalidState), runs publish (which
// puts the record back on its source topic), then records and audits the
// replay. A record is replayed at most once: its command id makes the
// consumer apply it at most once only while the consumer remembers applied
// ids (PROCESSED_RETENTION, 7 days by default), so a second replay weeks
// later could apply a command twice. A publish that fails records nothing;
// a crash after the broker acknowledged it and before the commit leaves the
// record parked, and the one replay an operator may then make again is
// deduplicated by the command id (it is that recent).
func (s *Store) MarkReplayed(ctx context.Context, d Decision, audit Audit, publish func(context.Context) error) (Decision, error) {
	var out Decision
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('dlq-replay:' || $1))`, d.RecordID); err != nil {
			return err
		}
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM dlq_decisions WHERE record_id = $1`, d.RecordID).Scan(&state)
		switch {
		case err == nil && state == StateReplayed:
			return ErrInvalidState
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if err := publish(ctx); err != nil {
			return err
		}
		out, err = decide(ctx, tx, replayedSQL, d, audit)
		return err
	})
	if errors.Is(err, ErrInvalidState) {
		return Decision{}, err
	}
	if err != nil {
		return Decision{}, fmt.Errorf("replay dlq record %s: %w", d.RecordID, err)
	}
	return out, nil
}

const discardedSQL = `
INSERT INTO dlq_decisions (record_id, topic, part, "offset", state, command_id, replays, actor, decided_at)
VALUES ($1, $2, $3, $4, 'discarded', $5, 0, $6, $7)
ON CONFLICT (record_id) DO UPDATE SET state = 'discarded', actor = EXCLUDED.actor, decided_at = EXCLUDED.decided_at
    WHERE dlq_decisions.state <> 'replayed'
RETURNING record_id, topic, part, "offset", state, command_id, replays, actor, decided_at`

// MarkDiscarded records that d.RecordID will not be replayed and audits it.
// A replayed record cannot be discarded (ErrInvalidState): its command is
// back on its topic. Discarding twice is allowed and audited twice.
func (s *Store) MarkDiscarded(ctx context.Context, d Decision, audit Audit) (Decision, error) {
	var out Decision
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		out, err = decide(ctx, tx, discardedSQL, d, audit)
		return err
	})
	if errors.Is(err, ErrInvalidState) {
		return Decision{}, err
	}
	if err != nil {
		return Decision{}, fmt.Errorf("mark dlq record %s discarded: %w", d.RecordID, err)
	}
	return out, nil
}

// decide records decision d with upsert (replayedSQL or discardedSQL) and
// audits it; a record whose state forbids d is ErrInvalidState.
func decide(ctx context.Context, tx pgx.Tx, upsert string, d Decision, audit Audit) (Decision, error) {
	rows, err := tx.Query(ctx, upsert, d.RecordID, d.Topic, d.Partition, d.Offset, d.CommandID, d.Actor, d.DecidedAt)
	if err != nil {
		return Decision{}, err
	}
	out, err := pgx.CollectExactlyOneRow(rows, scanDecision)
	if errors.Is(err, pgx.ErrNoRows) {
		return Decision{}, ErrInvalidState
	}
	if err != nil {
		return Decision{}, err
	}
	return out, insertAudit(ctx, tx, audit)
}

const insertAuditSQL = `
INSERT INTO dlq_audit (id, record_id, action, actor, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6)`

func insertAudit(ctx context.Context, tx pgx.Tx, a Audit) error {
	if _, err := tx.Exec(ctx, insertAuditSQL, a.ID, a.RecordID, a.Action, a.Actor, a.Detail, a.CreatedAt); err != nil {
		return fmt.Errorf("audit %s of %s: %w", a.Action, a.RecordID, err)
	}
	return nil
}

const historySQL = `
SELECT id, record_id, action, actor, detail, created_at FROM dlq_audit
WHERE record_id = $1 ORDER BY created_at, id`

// History returns the audited decisions about one record, oldest first.
func (s *Store) History(ctx context.Context, recordID string) ([]Audit, error) {
	rows, err := s.pool.Query(ctx, historySQL, recordID)
	if err != nil {
		return nil, fmt.Errorf("read dlq audit of %s: %w", recordID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Audit, error) {
		var a Audit
		err := r.Scan(&a.ID, &a.RecordID, &a.Action, &a.Actor, &a.Detail, &a.CreatedAt)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read dlq audit of %s: %w", recordID, err)
	}
	return out, nil
}

const replayedByCommandSQL = `
SELECT record_id, topic, part, "offset", state, command_id, replays, actor, decided_at
FROM dlq_decisions WHERE state = 'replayed' AND command_id <> '' AND command_id = ANY($1)
ORDER BY topic, part, "offset"`

// ReplayedByCommand returns the replayed records whose command id is one of
// commandIDs, by command id, in topic, partition and offset order: the
// records a command parked again after a replay may be the replay of.
func (s *Store) ReplayedByCommand(ctx context.Context, commandIDs []string) (map[string][]Decision, error) {
	out := map[string][]Decision{}
	if len(commandIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, replayedByCommandSQL, commandIDs)
	if err != nil {
		return nil, fmt.Errorf("read replayed dlq records: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDecision)
	if err != nil {
		return nil, fmt.Errorf("read replayed dlq records: %w", err)
	}
	for _, d := range list {
		out[d.CommandID] = append(out[d.CommandID], d)
	}
	return out, nil
}
