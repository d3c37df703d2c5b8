// Package pipeline stores what the command pipeline needs in Postgres: the
// applied command ids with their replies, and the append-only event log (the
// transactional outbox: one row per writing transaction, published by the
// relay, removed by dropping whole partitions).
package pipeline

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
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

// OutboxRow is one event to publish.
type OutboxRow struct {
	Topic   string
	Key     string
	Type    string
	EventID string
	Payload []byte
	// TraceParent is the W3C traceparent of the request that caused the
	// event ("" when none): the relay sends it as the record's header, so
	// one trace follows a request through the outbox.
	TraceParent string
}

// insertLogSQL appends one event_log row. The relay's horizon relies on
// every holder of a seq having taken its xid before it, so the xid and then
// the seq come from event_log_next_seq (migration 0240), whose two
// PL/pgSQL statements run in the order they are written; a function in
// FROM is called once per statement. The SQL this replaces (nextval in the
// projection over FROM pg_current_xact_id()) had that order only from its
// plan: pg_current_xact_id is STABLE, so the planner may evaluate it where
// and as often as it likes — a plan that pulled it up into the projection
// would have run nextval first.
const insertLogSQL = `
INSERT INTO event_log (seq, xid, topics, keys, types, event_ids, payloads, traceparents)
SELECT s.seq, s.writer_xid, $1, $2, $3, $4, $5, $6 FROM event_log_next_seq() AS s`

// InsertOutbox appends the events in the caller's transaction as one row of
// the event log; the relay publishes them in order once the transaction
// commits.
func InsertOutbox(ctx context.Context, q postgres.Querier, rows []OutboxRow) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := q.Exec(ctx, insertLogSQL, logArgs(rows)...); err != nil {
		return fmt.Errorf("append %d events to the event log: %w", len(rows), err)
	}
	return nil
}

// logArgs are insertLogSQL's arguments for rows: one array per column.
// traceparents is NULL when no event carries a trace.
func logArgs(rows []OutboxRow) []any {
	tps, keys, types, ids := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	payloads := make([][]byte, len(rows))
	var traces []string
	for i, r := range rows {
		tps[i], keys[i], types[i], ids[i], payloads[i] = r.Topic, r.Key, r.Type, r.EventID, r.Payload
		if r.TraceParent != "" && traces == nil {
			traces = make([]string, len(rows))
		}
	}
	for i := range traces {
		traces[i] = rows[i].TraceParent
	}
	return []any{tps, keys, types, ids, payloads, traces}
}

// LogEntry is one event_log row: the events of one writing transaction.
type LogEntry struct {
	Seq    int64
	Events []OutboxRow
}

// Horizon is what one relay statement saw: the xmin of a snapshot, the last
// seq handed out, and, when it asked for one and a seq above its mark
// existed, the xid it took after reading the sequence (none otherwise: an
// idle relay takes no xids). Every transaction holding a seq <= LastSeq took
// its xid before, so a later snapshot whose xmin reaches Xid proves them all
// ended.
type Horizon struct {
	Xmin    uint64
	LastSeq int64
	Xid     uint64
	HasXid  bool
}

// horizonSQL calls event_log_horizon (migration 0240), which reads the
// sequence and only then, in a later PL/pgSQL statement, takes the xid: the
// order no longer depends on the plan. (A single statement's did: PostgreSQL
// 15 planned the LATERAL that took the xid as the inner side of a nested
// loop, run before the sequence row was read out of its buffer, and also ran
// it, taking an xid, when no seq was above the mark.) A snapshot's xmax
// cannot stand in for the xid: it is the latest completed xid + 1, and
// running transactions above it are not in the snapshot at all.
const horizonSQL = `SELECT horizon_xmin, last_seq, taken_xid FROM event_log_horizon($1, $2)`

// ReadHorizon reads the current horizon; with takeXid it also takes an xid
// when a seq above mark was handed out.
func ReadHorizon(ctx context.Context, q postgres.Querier, takeXid bool, mark int64) (Horizon, error) {
	var raw rawHorizon
	if err := q.QueryRow(ctx, horizonSQL, takeXid, mark).Scan(&raw.xmin, &raw.last, &raw.xid); err != nil {
		return Horizon{}, fmt.Errorf("read event log horizon: %w", err)
	}
	return raw.parse()
}

// QueueReadHorizon queues ReadHorizon's statement on b; closing the batch
// fills h. The relay sends it in the round trip (and so the implicit
// transaction) of its lock check instead of a transaction of its own.
func QueueReadHorizon(b *pgx.Batch, takeXid bool, mark int64, h *Horizon) {
	b.Queue(horizonSQL, takeXid, mark).QueryRow(func(row pgx.Row) error {
		var raw rawHorizon
		if err := row.Scan(&raw.xmin, &raw.last, &raw.xid); err != nil {
			return fmt.Errorf("read event log horizon: %w", err)
		}
		got, err := raw.parse()
		if err != nil {
			return err
		}
		*h = got
		return nil
	})
}

// rawHorizon is a horizon row as scanned: the xids are text (xid8 has no
// pgx type of its own).
type rawHorizon struct {
	xmin string
	last int64
	xid  *string
}

func (raw rawHorizon) parse() (Horizon, error) {
	h := Horizon{LastSeq: raw.last}
	var err error
	if h.Xmin, err = strconv.ParseUint(raw.xmin, 10, 64); err != nil {
		return Horizon{}, fmt.Errorf("parse snapshot xmin %q: %w", raw.xmin, err)
	}
	if raw.xid != nil {
		if h.Xid, err = strconv.ParseUint(*raw.xid, 10, 64); err != nil {
			return Horizon{}, fmt.Errorf("parse xid %q: %w", *raw.xid, err)
		}
		h.HasXid = true
	}
	return h, nil
}

// ReadLog returns up to limit rows with after < seq <= upTo, in seq order.
func ReadLog(ctx context.Context, q postgres.Querier, after, upTo int64, limit int) ([]LogEntry, error) {
	rows, err := q.Query(ctx, `
SELECT seq, topics, keys, types, event_ids, payloads, COALESCE(traceparents, '{}') FROM event_log
WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`, after, upTo, limit)
	if err != nil {
		return nil, fmt.Errorf("read event log: %w", err)
	}
	defer rows.Close()
	var out []LogEntry
	for rows.Next() {
		var e LogEntry
		var tps, keys, types, ids, traces []string
		var payloads [][]byte
		if err := rows.Scan(&e.Seq, &tps, &keys, &types, &ids, &payloads, &traces); err != nil {
			return nil, fmt.Errorf("scan event log row: %w", err)
		}
		n := len(tps)
		if len(keys) != n || len(types) != n || len(ids) != n || len(payloads) != n {
			return nil, fmt.Errorf("event log row %d has arrays of different lengths", e.Seq)
		}
		e.Events = make([]OutboxRow, n)
		for i := range tps {
			e.Events[i] = OutboxRow{Topic: tps[i], Key: keys[i], Type: types[i], EventID: ids[i], Payload: payloads[i]}
			if i < len(traces) {
				e.Events[i].TraceParent = traces[i]
			}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read event log: %w", err)
	}
	return out, nil
}

// LogCursor returns the last seq the relay published.
func LogCursor(ctx context.Context, q postgres.Querier) (int64, error) {
	var seq int64
	if err := q.QueryRow(ctx, `SELECT seq FROM event_log_cursor`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read event log cursor: %w", err)
	}
	return seq, nil
}

// SetLogCursor records that every seq up to seq was published.
func SetLogCursor(ctx context.Context, q postgres.Querier, seq int64) error {
	if _, err := q.Exec(ctx, `UPDATE event_log_cursor SET seq = $1, published_at = now() WHERE seq < $1`, seq); err != nil {
		return fmt.Errorf("move event log cursor to %d: %w", seq, err)
	}
	return nil
}

// EventRow is the outbox row that publishes env to topic. Its payload is
// the envelope's encoding (schemas.Encode), which the relay sends as the
// record's value: storage keeps bytes and builds no Kafka record.
func EventRow(topic string, env schemas.Envelope) (OutboxRow, error) {
	payload, err := schemas.Encode(env)
	if err != nil {
		return OutboxRow{}, fmt.Errorf("encode %s event %s: %w", env.Type, env.ID, err)
	}
	return OutboxRow{Topic: topic, Key: env.Key, Type: env.Type, EventID: env.ID, Payload: payload}, nil
}

// The Queue functions put the same statements on a pgx.Batch, so that a
// consumer sends them in one round trip with others (pipelining); their
// results are read when the batch is closed.

// LookupAppliedSQL is the one statement that finds the applied commands
// among the ids $1: their processed rows and, when recordedSQL is not
// empty, the commands a consumer recorded on its own rows instead
// (recordedSQL selects command_id, request_hash and a text record for the
// ids $1). Its rows are (command_id, request_hash, status, body, record),
// record NULL for a processed row.
func LookupAppliedSQL(recordedSQL string) string {
	q := `SELECT command_id, request_hash, status, body, NULL::text FROM processed_commands WHERE command_id = ANY($1)`
	if recordedSQL != "" {
		q += `
UNION ALL
SELECT r.command_id, r.request_hash, 0, NULL::bytea, r.record FROM (` + recordedSQL + `) AS r(command_id, request_hash, record)`
	}
	return q
}

// QueueLookupApplied queues query (from LookupAppliedSQL) for ids; closing
// the batch calls processed for each processed row and recorded for each
// record.
func QueueLookupApplied(b *pgx.Batch, query string, ids []string, processed func(Processed), recorded func(id, hash, record string) error) {
	if len(ids) == 0 {
		return
	}
	b.Queue(query, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var p Processed
			var record *string
			if err := rows.Scan(&p.CommandID, &p.RequestHash, &p.Status, &p.Body, &record); err != nil {
				return fmt.Errorf("scan applied command: %w", err)
			}
			if record != nil {
				if err := recorded(p.CommandID, p.RequestHash, *record); err != nil {
					return err
				}
				continue
			}
			processed(p)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("lookup applied commands: %w", err)
		}
		return nil
	})
}

const insertProcessedSQL = `
INSERT INTO processed_commands (command_id, command_type, request_hash, status, body, created_at)
SELECT v.*, $6 FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bytea[]) AS v`

// QueueInsertProcessed queues the records of applied commands, with the
// same unique-violation contract as InsertProcessed.
func QueueInsertProcessed(b *pgx.Batch, rows []Processed) {
	if len(rows) == 0 {
		return
	}
	n := len(rows)
	ids, types, hashes, sts, bodies := make([]string, n), make([]string, n), make([]string, n), make([]int32, n), make([][]byte, n)
	for i, r := range rows {
		ids[i], types[i], hashes[i], sts[i], bodies[i] = r.CommandID, r.CommandType, r.RequestHash, int32(r.Status), r.Body
	}
	b.Queue(insertProcessedSQL, ids, types, hashes, sts, bodies, time.Now().UTC())
}

// QueueInsertOutbox queues the event log row of the events, as InsertOutbox.
func QueueInsertOutbox(b *pgx.Batch, rows []OutboxRow) {
	if len(rows) == 0 {
		return
	}
	b.Queue(insertLogSQL, logArgs(rows)...)
}

// QueueOrderLock queues the transaction-level advisory lock that orders a
// consumer's transactions over one set of partitions: queued first, it
// makes every later statement of the transaction wait until the
// transaction that held it before has committed or rolled back, so that
// statement's snapshot sees what that one committed. Postgres releases it
// at COMMIT or ROLLBACK.
func QueueOrderLock(b *pgx.Batch, key int64) {
	b.Queue(orderLockSQL, key)
}

const orderLockSQL = `SELECT pg_advisory_xact_lock($1)`

// OrderLockKey is the advisory lock key of one runner's transactions over
// one set of partitions (its worker); owner names the runner (its group and
// an instance id).
func OrderLockKey(owner string, worker, workers int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "consumer-order/%s/%d/%d", owner, worker, workers)
	return int64(h.Sum64())
}
