// Package schemas holds the versioned message types shared by producers and
// consumers: the envelope every record carries, and one type per command and
// event. It does no I/O.
package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/ksuid"
)

// Envelope is the JSON shape of every record on every topic (architecture.md,
// "Message envelope"). Data holds the type-specific payload.
type Envelope struct {
	ID            string    `json:"id"`
	Type          string    `json:"type"`
	SchemaVersion int       `json:"schemaVersion"`
	OccurredAt    time.Time `json:"occurredAt"`
	Key           string    `json:"key"`
	CorrelationID string    `json:"correlationId,omitempty"`
	ReplyTo       string    `json:"replyTo,omitempty"`
	ActorUserID   string    `json:"actorUserId,omitempty"`
	// RequestHash is the SHA-256 of the request that produced a command. Two
	// commands with the same ID but different hashes are an idempotency-key
	// reuse, answered with 409 instead of the stored result.
	RequestHash string          `json:"requestHash,omitempty"`
	Data        json.RawMessage `json:"data"`
}

// ErrUnknownType is returned by Decode for a type this build does not know.
var ErrUnknownType = errors.New("unknown message type")

// ErrNewerSchema is returned by Decode for a schema version newer than this
// build reads.
var ErrNewerSchema = errors.New("newer schema version")

// NewID returns a new time-ordered identifier (a ksuid).
func NewID() string { return ksuid.New().String() }

// New builds an envelope of the given type around data, with a fresh id and
// the type's current schema version.
func New(typ, key, actorUserID string, data any, now time.Time) (Envelope, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Envelope{}, fmt.Errorf("encode %s: %w", typ, err)
	}
	return Envelope{
		ID:            NewID(),
		Type:          typ,
		SchemaVersion: Version(typ),
		OccurredAt:    now.UTC(),
		Key:           key,
		ActorUserID:   actorUserID,
		Data:          raw,
	}, nil
}

// Decode parses a record value into an envelope and checks that this build
// can read its type and schema version.
func Decode(value []byte) (Envelope, error) {
	var env Envelope
	if err := json.Unmarshal(value, &env); err != nil {
		return Envelope{}, fmt.Errorf("decode envelope: %w", err)
	}
	if env.ID == "" || env.Type == "" {
		return Envelope{}, fmt.Errorf("decode envelope: missing id or type")
	}
	max, ok := lookupVersion(env.Type)
	if !ok {
		return Envelope{}, fmt.Errorf("%w %q", ErrUnknownType, env.Type)
	}
	if env.SchemaVersion > max {
		return Envelope{}, fmt.Errorf("%w: %s v%d > v%d", ErrNewerSchema, env.Type, env.SchemaVersion, max)
	}
	return env, nil
}

// DataAs decodes the envelope's data into T.
func DataAs[T any](env Envelope) (T, error) {
	var v T
	if err := json.Unmarshal(env.Data, &v); err != nil {
		return v, fmt.Errorf("decode %s data: %w", env.Type, err)
	}
	return v, nil
}

// IsID reports whether s has the shape of the ids NewID makes (a ksuid: 27
// base62 characters). A path or body value of another shape names nothing.
func IsID(s string) bool {
	if len(s) != 27 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}
