// Package webhooks delivers the platform's events to subscribed HTTPS
// endpoints and to the admin event stream. The Dispatcher consumes the
// events.* topics and only records durable delivery rows; the Scheduler
// works through due rows on a bounded worker pool, signing each attempt;
// StreamFormat renders the events of the admin stream (gateway/webhooks.Hub).
package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
	"github.com/fintech/platform/topics"
)

// Event is an event read from an events.* topic, with the envelope fields
// subscription matching needs.
type Event struct {
	store.Event
	Key         string
	ActorUserID string
}

// ParseRecord reads an event record. It does not consult the schema
// registry: webhooks forward the data as produced, so event types this
// build does not know are delivered too.
func ParseRecord(rec *kgo.Record) (Event, error) {
	env, err := schemas.Read(rec.Value)
	if err != nil {
		return Event{}, err
	}
	if env.ID == "" || env.Type == "" {
		return Event{}, errors.New("event without id or type")
	}
	data := canonical(env.Data)
	occurred := env.OccurredAt
	if occurred.IsZero() {
		occurred = rec.Timestamp
	}
	return Event{
		Event: store.Event{ID: env.ID, Type: env.Type, Module: ModuleOf(rec.Topic), Data: data,
			OccurredAt: occurred.UTC(), TraceParent: topics.Header(rec, "traceparent")},
		Key:         env.Key,
		ActorUserID: env.ActorUserID,
	}, nil
}

// canonical re-encodes JSON with object keys sorted at every level (numbers
// kept exactly), like the signed bodies of the inbound partner webhooks, so
// a receiver that re-serializes the payload gets the same bytes. Missing or
// invalid data becomes {}.
func canonical(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []byte("{}")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return out
}

// ModuleOf names the module of an events.<module> topic.
func ModuleOf(topic string) string { return strings.TrimPrefix(topic, "events.") }

// Subjects lists the ids an event is about: user ids (the actor, the record
// key, and top-level data fields named userId or ending in UserId) and
// wallet ids (the key, and data fields named walletId or ending in Wallet or
// WalletId, such as transfer.completed's fromWallet and toWallet). Ids are
// ksuids, so a key is safely tried as both.
func Subjects(ev Event) (users, wallets []string) {
	add := func(list []string, v string) []string {
		if v == "" {
			return list
		}
		for _, x := range list {
			if x == v {
				return list
			}
		}
		return append(list, v)
	}
	users = add(users, ev.ActorUserID)
	users = add(users, ev.Key)
	wallets = add(wallets, ev.Key)
	var fields map[string]json.RawMessage
	if json.Unmarshal(ev.Data, &fields) != nil {
		return users, wallets
	}
	for k, raw := range fields {
		var v string
		if json.Unmarshal(raw, &v) != nil || v == "" {
			continue
		}
		switch {
		case k == "userId" || strings.HasSuffix(k, "UserId"):
			users = add(users, v)
		case k == "walletId" || strings.HasSuffix(k, "WalletId") || strings.HasSuffix(k, "Wallet"):
			wallets = add(wallets, v)
		}
	}
	return users, wallets
}

// Match pairs events with the subscriptions that receive them: a
// subscription receives an event whose subject is its owner (directly or as
// the owner of a wallet the event names), or every event when it is an
// all-events subscription whose owner is a fiat admin now (Candidate.Admin:
// made from an admin's login session, re-checked at every batch); its event list, when set, must name the type; and only
// events that occurred after the subscription was created are sent.
func Match(events []Event, cands []store.Candidate, owners map[string]string) []store.NewDelivery {
	var out []store.NewDelivery
	for _, ev := range events {
		users, wallets := Subjects(ev)
		subject := map[string]bool{}
		for _, u := range users {
			subject[u] = true
		}
		for _, w := range wallets {
			if o, ok := owners[w]; ok {
				subject[o] = true
			}
		}
		for _, c := range cands {
			if !c.Admin && !subject[c.UserID] {
				continue
			}
			if c.Events != nil && !contains(c.Events, ev.Type) {
				continue
			}
			if ev.OccurredAt.Before(c.CreatedAt) {
				continue
			}
			out = append(out, store.NewDelivery{SubscriptionID: c.ID, EventID: ev.ID})
		}
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Payload is the body of a delivery and of an admin stream message:
// { data, id, module, sentAt, type } with keys in alphabetical order.
func Payload(ev store.Event, sentAt time.Time) []byte {
	b, err := json.Marshal(map[string]any{
		"id":     ev.ID,
		"type":   ev.Type,
		"module": ev.Module,
		"sentAt": sentAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		"data":   json.RawMessage(ev.Data),
	})
	if err != nil {
		// Data is validated JSON when the event is read, so this does not
		// happen; a payload without data is still better than none.
		b, _ = json.Marshal(map[string]any{"id": ev.ID, "type": ev.Type, "module": ev.Module,
			"sentAt": sentAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"), "data": nil})
	}
	return b
}

// StreamFormat reads event records for the admin event stream (gateway/webhooks.Hub):
// a message's body is the delivery payload of its event.
type StreamFormat struct{}

// Head returns the id and type of an event record.
func (StreamFormat) Head(rec *kgo.Record) (id, typ string, err error) {
	ev, err := ParseRecord(rec)
	return ev.ID, ev.Type, err
}

// Payload renders the delivery payload of an event record received at;
// an unreadable record renders as {}.
func (StreamFormat) Payload(rec *kgo.Record, at time.Time) []byte {
	ev, err := ParseRecord(rec)
	if err != nil {
		return []byte("{}")
	}
	return Payload(ev.Event, at)
}
