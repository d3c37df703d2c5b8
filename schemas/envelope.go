// Package schemas holds the versioned message types shared by producers and
// consumers: the envelope every record carries, and one type per command and
// event. It does no I/O.
package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	gojson "github.com/goccy/go-json"
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
	raw, err := gojson.Marshal(data)
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

// Records are read with goccy/go-json, and their data written with it (New):
// every consumer decodes every record's envelope and data, and encoding/json
// (which scans a value twice, once to validate it) was 14% of the platform's
// CPU under the bench, its encoding of record data 4%. The two read the same
// values (TestReadAgreesWithEncodingJSON) and write the same bytes
// (TestNewWritesWhatEncodingJSONWrites). Request bodies are still read by
// encoding/json, with the gateway's own checks (gateway/bind), and the
// ledger's canonical JSON, which its hashes cover, is encoding/json's.

// Read parses a record value into an envelope without consulting the type
// registry: for consumers that forward events of any type.
func Read(value []byte) (Envelope, error) {
	var env Envelope
	if err := gojson.Unmarshal(value, &env); err != nil {
		return Envelope{}, fmt.Errorf("decode envelope: %w", err)
	}
	return env, nil
}

// Decode parses a record value into an envelope and checks that this build
// can read its type and schema version.
func Decode(value []byte) (Envelope, error) {
	env, err := Read(value)
	if err != nil {
		return Envelope{}, err
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
	if err := gojson.Unmarshal(env.Data, &v); err != nil {
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

// Encode returns the envelope's JSON, the same document json.Marshal makes
// (field order, omitted empty fields, RFC 3339 time) without reflection and
// without re-validating Data: Data is written as it is, so it must be JSON
// (New and every decoder produce it so). json.Marshal compacts and checks a
// RawMessage on every call, and envelopes are encoded once per record on
// every hop; this is that encode, once.
func Encode(env Envelope) ([]byte, error) {
	b := make([]byte, 0, 256+len(env.Data))
	b = append(b, `{"id":`...)
	b = appendString(b, env.ID)
	b = append(b, `,"type":`...)
	b = appendString(b, env.Type)
	b = append(b, `,"schemaVersion":`...)
	b = strconv.AppendInt(b, int64(env.SchemaVersion), 10)
	b = append(b, `,"occurredAt":`...)
	t, err := env.OccurredAt.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", env.Type, env.ID, err)
	}
	b = append(b, t...)
	b = append(b, `,"key":`...)
	b = appendString(b, env.Key)
	for _, f := range [...]struct{ name, v string }{
		{`,"correlationId":`, env.CorrelationID},
		{`,"replyTo":`, env.ReplyTo},
		{`,"actorUserId":`, env.ActorUserID},
		{`,"requestHash":`, env.RequestHash},
	} {
		if f.v != "" {
			b = append(b, f.name...)
			b = appendString(b, f.v)
		}
	}
	b = append(b, `,"data":`...)
	if len(env.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, env.Data...)
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string: plain printable ASCII as it is,
// anything else through encoding/json's escaping.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
