package schemas

import (
	"encoding/json"
	"time"
)

// TypeCommandOutcome is the type of records on the outcome journals
// (topics.OutcomesOf): what an applier decided for one command.
const TypeCommandOutcome = "command.outcome"

var outcomeVersions = map[string]int{TypeCommandOutcome: 1}

// CommandOutcome is one command's first outcome, journaled on Kafka after
// the batch that decided it committed and before its reply is sent, so
// every answer a client received is on the journal. A database restored to
// an earlier point re-applies the command reproducing it (see
// consumers/pipeline/journal.go).
type CommandOutcome struct {
	CommandID string `json:"commandId"`
	// Topic, Partition and Offset place the command record.
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// Status and Body are the answer the client was given.
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
	// DecidedAt is the clock the applier decided the command with (zero
	// when the applier does not say).
	DecidedAt time.Time `json:"decidedAt"`
	// Events are what a rejection emitted (transfer.failed): a
	// re-application answers it without deciding it again and emits them
	// again. A success's events are decided again.
	Events []OutcomeEvent `json:"events,omitempty"`
}

// OutcomeEvent is one event a command emitted, with its topic.
type OutcomeEvent struct {
	Topic string   `json:"topic"`
	Event Envelope `json:"event"`
}
