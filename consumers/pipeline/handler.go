// Package pipeline is the consumer framework every Postgres-applying consumer
// group uses: it polls a batch of command records, applies the new ones in one
// Postgres transaction together with their processed-command rows and outbox
// rows, commits, sends the replies, and only then commits the Kafka offsets.
// A command redelivered after a crash finds its processed row and gets its
// stored reply re-sent instead of being applied again.
//
// A module's applier declares each of its command types once on a Table
// (declare.go): the command's schemas data type, what it locks (Lock) and
// how it decides (Decide); it never switches over command types. README.md
// in this directory shows the one way to write an applier, with fiat's
// transfer as the worked example, and how a consumer reads other modules'
// events beside its commands (DeclareEvent, reputation).
package pipeline

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/schemas"
)

// Command is one decoded command record.
type Command struct {
	Env   schemas.Envelope
	Topic string
	// Trace is the span context in the record's traceparent header (not
	// valid without one): its reply and the events it emits carry it on.
	Trace trace.SpanContext
	// Partition and Offset place its record.
	Partition int32
	Offset    int64
	// Recorded is the outcome the command was given the first time it was
	// applied, when that application is on the outcome journal but not in
	// the database (a restore to an earlier point): the command is
	// re-applied reproducing it (journal.go). Nil for a command applied
	// for the first time.
	Recorded *Recorded
	// Fetched is when the poll that read its record returned (Unix
	// nanoseconds; 0 when unknown): the first of the applier's hops on its
	// reply (topics.HopsHeader).
	Fetched int64
}

// Emission is a record the applied command causes, queued in the outbox in
// the same transaction and published by the relay.
type Emission struct {
	Topic string
	Env   schemas.Envelope
}

// Outcome is the result of applying one command: the HTTP answer for the
// waiting request (stored for replays) and what the change emits. Business
// rejections such as insufficient funds are outcomes with a 4xx status, not
// errors.
type Outcome struct {
	Status int
	Body   []byte
	Emit   []Emission
	// Unrecorded skips the processed-command row. A handler sets it only
	// when its own unique key makes applying the command again a no-op
	// (ledger source, reputation source) and nobody waits for the reply
	// (no ReplyTo), so the stored reply would never be read.
	Unrecorded bool
	// SelfRecorded skips the processed-command row because the handler's
	// own row is the command's record: the handler is a Recorder whose
	// lookup finds this command once the batch commits, and a unique key on
	// that row makes a concurrent second application fail.
	SelfRecorded bool
	// DecidedAt is the clock the handler decided the command with: the
	// journal keeps it, and a re-application decides with it (Clock).
	DecidedAt time.Time
	// Held marks a re-applied command that cannot be decided yet as it
	// was the first time (Passes): it is not recorded, and its partition
	// is applied again from it in a later batch.
	Held bool
}

// Handler applies a batch of never-applied commands inside tx, in the order
// given (which is partition order for each key), and returns one outcome per
// command. An error rolls the whole batch back; it is retried when
// retriable, else the batch is split to find the command that fails.
type Handler interface {
	Apply(ctx context.Context, tx pgx.Tx, cmds []Command) ([]Outcome, error)
}

// RejectionWriter is a handler some of whose rejections change something:
// a mask charge declined 402 is a declined charge row, which the risk score
// of the mask's later charges reads (recent_decline). A re-applied command
// recorded with such a status is decided again like a success, at its first
// clock, and must decide the same status (reproduce.go); the others are
// answered their recorded rejection without being decided.
type RejectionWriter interface {
	Handler
	WritesRejection(status int) bool
}

// JSON encodes v as an outcome body with the given status.
func JSON(status int, v any) Outcome {
	b, err := json.Marshal(v)
	if err != nil {
		return Outcome{Status: 500, Body: schemas.ErrorJSON(schemas.CodeInternal, "could not encode the result", nil)}
	}
	return Outcome{Status: status, Body: b}
}

// Unreadable is the one answer to a command a consumer cannot read (an
// unknown type for its topic, data that does not decode, or data that fails
// the command's Validate): 400 invalid_command with what was wrong. The
// gateway validates every command before it publishes it, so no client
// request meets it; a record from elsewhere does.
func Unreadable(detail string) Outcome {
	return Reject(http.StatusBadRequest, schemas.CodeInvalidCommand, "the command could not be read: "+detail, nil)
}

// Reject is a business rejection outcome with the spec's error shape.
func Reject(status int, code, message string, extra map[string]any) Outcome {
	return Outcome{Status: status, Body: schemas.ErrorJSON(code, message, extra)}
}

// Pipelined is a Handler that can also apply a batch in two round trips to
// Postgres: the runner sends BEGIN, the processed-command lookup and the
// reads the handler queued (its row locks) as one pipelined batch, lets the
// handler decide the fresh commands in memory, and sends the handler's
// writes, the processed rows, the event log row and COMMIT as a second.
// Handlers that do not implement it, or whose Load returns nil for a batch,
// are applied through Apply in a pgx.Tx.
type Pipelined interface {
	Handler
	// Load queues on b the reads for cmds: every command of the batch,
	// applied before or not (locking the rows of one applied before is
	// harmless). It must lock shared rows in a fixed order, as Apply does. It
	// returns nil when this batch needs Apply.
	Load(cmds []Command, b *pgx.Batch) Loaded
}

// Loaded decides the commands of one batch once the reads that Load queued
// have run. It is used once.
type Loaded interface {
	// Decide applies fresh, the commands never applied before (a
	// subsequence of those loaded, in order), in memory, returns one outcome
	// per command and queues the writes on b. An error rolls the batch back,
	// as an error of Apply does.
	Decide(ctx context.Context, fresh []Command, b *pgx.Batch) ([]Outcome, error)
}

// Recorder is a Handler that keeps the record of some of its applied
// commands on its own rows (see Outcome.SelfRecorded). The runner looks
// them up in the same statement as processed_commands (UNION ALL), so a
// batch asks "applied before?" once.
type Recorder interface {
	Handler
	// RecordedSQL selects (command_id, request_hash, record text) of the
	// commands among the ids $1 (text[]) that the handler recorded.
	RecordedSQL() string
	// Recorded rebuilds the stored result of a command from its record.
	Recorded(record string) (status int, body []byte, err error)
}
