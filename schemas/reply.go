package schemas

import "encoding/json"

// TypeReply is the type of records on gateway.replies.
const TypeReply = "command.reply"

var replyVersions = map[string]int{TypeReply: 1}

// Reply is the outcome of one command, sent back to the gateway instance that
// waits for it. Status and Body are the HTTP answer, stored byte for byte so a
// replay answers exactly as the first time.
type Reply struct {
	CommandID string          `json:"commandId"`
	Status    int             `json:"status"`
	Body      json.RawMessage `json:"body"`
	// Replayed is true when the command had been applied before and Body is
	// the stored answer.
	Replayed bool `json:"replayed,omitempty"`
	// Hops are the times (Unix nanoseconds) the command passed on its way
	// to this reply, filled by the gateway's bus from the reply record and
	// its own clock, never serialized: produced, acknowledged by the
	// broker, fetched by the applier, its batch begun, committed, the reply
	// produced, the reply seen by the gateway (issue 48's latency budget).
	Hops []int64 `json:"-"`
}
