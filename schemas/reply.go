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
}
