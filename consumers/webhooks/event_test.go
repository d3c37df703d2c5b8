package webhooks

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	store "github.com/fintech/platform/storage/webhooks"
)

func TestParseRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		topic   string
		value   string
		want    Event
		wantErr bool
	}{
		{"fiat event", "events.fiat",
			`{"id":"e1","type":"transfer.completed","occurredAt":"2026-01-02T03:04:05Z","key":"w1","actorUserId":"u1","data":{"txId":"t1"}}`,
			Event{Event: store.Event{ID: "e1", Type: "transfer.completed", Module: "fiat", Data: []byte(`{"txId":"t1"}`),
				OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, Key: "w1", ActorUserID: "u1"}, false},
		{"data keys sorted, numbers exact", "events.fiat",
			`{"id":"e4","type":"transfer.completed","occurredAt":"2026-01-02T03:04:05Z","data":{"txId":"t","amountKzt":900719925474099312,"b":{"z":1,"a":[2,{"y":0,"x":1.5}]}}}`,
			Event{Event: store.Event{ID: "e4", Type: "transfer.completed", Module: "fiat",
				Data:       []byte(`{"amountKzt":900719925474099312,"b":{"a":[2,{"x":1.5,"y":0}],"z":1},"txId":"t"}`),
				OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}, false},
		{"unknown type is kept", "events.partner",
			`{"id":"e2","type":"something.new","occurredAt":"2026-01-02T03:04:05Z","data":null}`,
			Event{Event: store.Event{ID: "e2", Type: "something.new", Module: "partner", Data: []byte(`null`),
				OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}, false},
		{"missing data becomes {}", "events.gov",
			`{"id":"e3","type":"proposal.passed","occurredAt":"2026-01-02T03:04:05Z"}`,
			Event{Event: store.Event{ID: "e3", Type: "proposal.passed", Module: "gov", Data: []byte(`{}`),
				OccurredAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}, false},
		{"no id", "events.fiat", `{"type":"x"}`, Event{}, true},
		{"not json", "events.fiat", `nope`, Event{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRecord(&kgo.Record{Topic: tt.topic, Value: []byte(tt.value)})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		ev             Event
		users, wallets []string
	}{
		{"transfer: actor, key, both wallets",
			Event{Event: store.Event{Data: []byte(`{"txId":"t","fromWallet":"wA","toWallet":"wB","amountKzt":5}`)}, Key: "wA", ActorUserID: "uA"},
			[]string{"uA", "wA"}, []string{"wA", "wB"}},
		{"user fields",
			Event{Event: store.Event{Data: []byte(`{"userId":"u1","merchantUserId":"u2","walletId":"w9","amount":3}`)}},
			[]string{"u1", "u2"}, []string{"w9"}},
		{"non-string and nested fields are ignored",
			Event{Event: store.Event{Data: []byte(`{"userId":7,"meta":{"userId":"u3"},"toWallet":""}`)}},
			nil, nil},
		{"data not an object", Event{Event: store.Event{Data: []byte(`[1]`)}, ActorUserID: "u"}, []string{"u"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			users, wallets := Subjects(tt.ev)
			sort.Strings(users)
			sort.Strings(wallets)
			if !reflect.DeepEqual(users, tt.users) || !reflect.DeepEqual(wallets, tt.wallets) {
				t.Fatalf("users %v wallets %v, want %v %v", users, wallets, tt.users, tt.wallets)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sub := func(id, user string, admin bool, events ...string) store.Candidate {
		c := store.Candidate{Subscription: store.Subscription{ID: id, UserID: user, CreatedAt: t0}, Admin: admin}
		if len(events) > 0 {
			c.Events = events
		}
		return c
	}
	transfer := Event{Event: store.Event{ID: "e1", Type: "transfer.completed", OccurredAt: t0.Add(time.Minute),
		Data: []byte(`{"fromWallet":"wA","toWallet":"wB"}`)}, Key: "wA", ActorUserID: "uA"}
	owners := map[string]string{"wA": "uA", "wB": "uB"}
	tests := []struct {
		name  string
		ev    Event
		cands []store.Candidate
		want  []string
	}{
		{"sender, receiver and admin; not a stranger", transfer,
			[]store.Candidate{sub("sA", "uA", false), sub("sB", "uB", false), sub("sC", "uC", false), sub("sAdm", "uAdm", true)},
			[]string{"sA", "sB", "sAdm"}},
		{"event list filters, admins included", transfer,
			[]store.Candidate{sub("sA", "uA", false, "transfer.failed"), sub("sB", "uB", false, "transfer.completed"),
				sub("sAdm", "uAdm", true, "score.updated")},
			[]string{"sB"}},
		{"subscription created after the event gets nothing",
			Event{Event: store.Event{ID: "e0", Type: "transfer.completed", OccurredAt: t0.Add(-time.Second)}, ActorUserID: "uA"},
			[]store.Candidate{sub("sA", "uA", false)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, p := range Match([]Event{tt.ev}, tt.cands, owners) {
				if p.EventID != tt.ev.ID {
					t.Fatalf("pair for event %s", p.EventID)
				}
				got = append(got, p.SubscriptionID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPayload(t *testing.T) {
	t.Parallel()
	ev := store.Event{ID: "e1", Type: "transfer.completed", Module: "fiat", Data: []byte(`{"txId": "t1", "amountKzt": 100}`)}
	got := string(Payload(ev, time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.FixedZone("x", 3600))))
	want := `{"data":{"txId":"t1","amountKzt":100},"id":"e1","module":"fiat","sentAt":"2026-03-04T04:06:07.008Z","type":"transfer.completed"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The expected values were computed with openssl:
//
//	printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'test-secret-0123456789' -hex
//	printf 'evt_1.1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'test-secret-0123456789' -binary | base64
func TestSign(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	Sign(h, "test-secret-0123456789", "evt_1", 1700000000, []byte(`{"a":1}`))
	// Keys as sent: the spec's headers canonical, the Standard Webhooks ones
	// lower-case as that spec spells them.
	want := map[string]string{
		"X-Platform-Timestamp": "1700000000",
		"X-Platform-Signature": "sha256=6e873f59dc6002f6de5f578e9bf3f90a7906473a2924651d6f4cc33d61aff598",
		"webhook-id":           "evt_1",
		"webhook-timestamp":    "1700000000",
		"webhook-signature":    "v1,p1EkfXTn5Nt1Ya1W182mi6d2GO6sJJoMrkGfOl9a77s=",
	}
	for k, v := range want {
		if got := h[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestNextResult(t *testing.T) {
	t.Parallel()
	schedule := []time.Duration{0, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 8 * time.Hour}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := Attempt{StatusCode: 500, Error: "endpoint answered 500"}
	tests := []struct {
		name     string
		prev     int
		a        Attempt
		status   string
		attempts int
		next     time.Duration // -1: none
	}{
		{"first attempt succeeds", 0, Attempt{OK: true, StatusCode: 204}, store.StatusDelivered, 1, -1},
		{"first fails: second in 5m", 0, fail, store.StatusFailed, 1, 5 * time.Minute},
		{"second fails: third in 30m", 1, fail, store.StatusFailed, 2, 30 * time.Minute},
		{"fourth fails: fifth in 8h", 3, fail, store.StatusFailed, 4, 8 * time.Hour},
		{"fifth fails: dead letter", 4, fail, store.StatusDeadLetter, 5, -1},
		{"fifth succeeds", 4, Attempt{OK: true, StatusCode: 200}, store.StatusDelivered, 5, -1},
		{"manual retry after dead letter fails again", 5, fail, store.StatusDeadLetter, 6, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NextResult(tt.prev, tt.a, schedule, now)
			if r.Status != tt.status || r.Attempts != tt.attempts || r.StatusCode != tt.a.StatusCode || r.Error != tt.a.Error {
				t.Fatalf("got %+v", r)
			}
			switch {
			case tt.next < 0 && r.NextAttemptAt != nil:
				t.Fatalf("next attempt %v, want none", r.NextAttemptAt)
			case tt.next >= 0 && (r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(now.Add(tt.next))):
				t.Fatalf("next attempt %v, want now+%s", r.NextAttemptAt, tt.next)
			}
		})
	}
}

func TestPayloadIsValidJSONWithSpecFields(t *testing.T) {
	t.Parallel()
	var m map[string]any
	if err := json.Unmarshal(Payload(store.Event{ID: "e", Type: "t", Module: "m", Data: []byte(`{}`)}, time.Now()), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "type", "module", "sentAt", "data"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("payload lacks %s: %v", k, m)
		}
	}
}
