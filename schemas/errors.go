package schemas

import "encoding/json"

// ErrorBody is the error shape of every API answer (decisions.md,
// Conventions): { "error": code, "message": text, ...extra }. Consumers build
// business rejections with it so the gateway can answer them unchanged.
type ErrorBody struct {
	Error   string            `json:"error"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// ErrorJSON encodes an error body, merging extra top-level fields.
func ErrorJSON(code, message string, extra map[string]any) []byte {
	if len(extra) == 0 {
		b, _ := json.Marshal(ErrorBody{Error: code, Message: message})
		return b
	}
	m := make(map[string]any, len(extra)+2)
	for k, v := range extra {
		m[k] = v
	}
	m["error"] = code
	m["message"] = message
	b, _ := json.Marshal(m)
	return b
}

// CodeIdempotencyKeyReused answers a reused Idempotency-Key with another body.
const CodeIdempotencyKeyReused = "idempotency_key_reused"

// IdempotencyConflict is the 409 body for a reused key.
func IdempotencyConflict() []byte {
	return ErrorJSON(CodeIdempotencyKeyReused, "this Idempotency-Key was used with a different request body", nil)
}
