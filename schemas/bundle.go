package schemas

import (
	"encoding/json"
	"fmt"
	"time"

	gojson "github.com/goccy/go-json"
)

// TypeEventBundle is the record that carries the events one applier batch
// emitted to a bundled topic (topics.Spec.Bundled): its data is the JSON
// array of their envelopes, each whole. The events derived from every
// transfer (score updates, ledger entries) travel one record per batch
// instead of one per event; readers expand a bundle before they look at it
// (topics.Expand), so webhooks, streams and the analytics copy see the
// events, never the bundle.
const TypeEventBundle = "event.bundle"

var bundleVersions = map[string]int{TypeEventBundle: 1}

// Bundle wraps events into one bundle envelope keyed by key.
func Bundle(key string, events []Envelope, now time.Time) (Envelope, error) {
	return New(TypeEventBundle, key, "", events, now)
}

// Unbundle returns the encoded envelopes a bundle carries, each as it was
// written.
func Unbundle(env Envelope) ([]json.RawMessage, error) {
	if env.Type != TypeEventBundle {
		return nil, fmt.Errorf("%s is not a bundle", env.Type)
	}
	var events []json.RawMessage
	if err := gojson.Unmarshal(env.Data, &events); err != nil {
		return nil, fmt.Errorf("decode bundle %s: %w", env.ID, err)
	}
	return events, nil
}
