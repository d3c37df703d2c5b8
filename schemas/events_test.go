package schemas

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// notEvents are the registry's message types that are neither events nor
// commands: replies, analytics change records, the bundle carrier. Commands
// (and appended records) are not listed: they are CommandCatalog's.
var notEvents = map[string]bool{
	TypeReply: true,
	// Analytics change records (topics.Analytics*), never delivered.
	TypeWebhookDeliveryUpdated: true,
	// The carrier of bundled events, expanded before delivery.
	TypeEventBundle: true,
	// The outcome journals' records (topics.OutcomesOf), read by appliers only.
	TypeCommandOutcome: true,
}

// commandTypes are the message types that travel on command and append
// topics: those of CommandCatalog.
func commandTypes(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, c := range CommandCatalog() {
		if out[c.Type] {
			t.Errorf("%s is listed twice in CommandCatalog", c.Type)
		}
		out[c.Type] = true
		if c.Topic == "" || c.Data == nil {
			t.Errorf("%s lacks a topic or a data type in CommandCatalog", c.Type)
		}
	}
	return out
}

// TestCommandCatalogIsRegistered fails when a catalog command has no
// schema version in the registry: its records would be parked on the DLQ,
// never applied.
func TestCommandCatalogIsRegistered(t *testing.T) {
	for _, c := range CommandCatalog() {
		env, err := New(c.Type, "k", "", map[string]any{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(raw); errors.Is(err, ErrUnknownType) {
			t.Errorf("%s has no schema version: one line in its module's versions map (e.g. fiatVersions, "+
				"schemas/fiat.go); without it the consumer parks its records on the DLQ", c.Type)
		}
	}
}

// TestEventCatalogIsComplete fails when the registry knows a message type
// that is neither in the event catalog (GET /api/platform/events) nor a
// command: a new event type must be described before it is delivered.
func TestEventCatalogIsComplete(t *testing.T) {
	commands := commandTypes(t)
	if len(commands) < 18 {
		t.Fatalf("found only %d command types: the doc convention walk is broken", len(commands))
	}
	listed := map[string]bool{}
	for _, e := range EventCatalog() {
		if listed[e.Type] {
			t.Errorf("%s is listed twice", e.Type)
		}
		listed[e.Type] = true
		if e.Module == "" || e.Meaning == "" || e.Data == nil {
			t.Errorf("%s lacks a module, meaning or data type", e.Type)
		}
	}
	for _, m := range moduleVersions {
		for typ := range m {
			if !listed[typ] && !notEvents[typ] && !commands[typ] {
				t.Errorf("message type %s is neither in EventCatalog nor a command: README \"Adding a module\", "+
					"step 1 — an event gets its EventCatalog entry, a command its CommandCatalog line "+
					"(schemas/commands.go)", typ)
			}
			if listed[typ] && (notEvents[typ] || commands[typ]) {
				t.Errorf("%s is both an event and a command", typ)
			}
		}
	}
	// The spec's Events table, every type of it.
	for _, typ := range strings.Fields(`transfer.completed transfer.failed request.paid request.expired
		deposit.completed merchant.charge.success donation.received campaign.goal_reached mask.created
		charge.authorized charge.declined score.updated rank.promoted proposal.passed proposal.rejected
		ledger.entry_added ledger.chain_verified`) {
		if !listed[typ] {
			t.Errorf("the spec's %s is not listed", typ)
		}
	}
}
