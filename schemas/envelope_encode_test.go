package schemas

import (
	"encoding/json"
	"testing"
	"time"
)

// TestEncodeMatchesMarshal: Encode writes the document json.Marshal writes.
func TestEncodeMatchesMarshal(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 12, 0, 0, 123456789, time.UTC)
	tests := []struct {
		name string
		env  Envelope
	}{
		{"command", Envelope{ID: "2fYq1mZbXkL0aVdT3nQe5rWcPsH", Type: TypeFiatTransfer, SchemaVersion: 1, OccurredAt: at,
			Key: "w1", CorrelationID: "c1", ReplyTo: "gw-1", ActorUserID: "u1", RequestHash: "abc",
			Data: json.RawMessage(`{"fromWalletId":"w1","amount":100}`)}},
		{"omitted empties, nil data", Envelope{ID: "i", Type: "t", OccurredAt: at}},
		{"zero time", Envelope{ID: "i", Type: "t", Data: json.RawMessage(`[]`)}},
		{"escapes", Envelope{ID: "i\"\\\n<&>", Type: "t\u2028é", Key: "\x01", OccurredAt: at.In(time.FixedZone("x", 3600)),
			Data: json.RawMessage(`"s"`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Encode(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("Encode:\n%s\njson.Marshal:\n%s", got, want)
			}
		})
	}
	if _, err := Encode(Envelope{OccurredAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Fatal("a year past 9999 encoded")
	}
}

func BenchmarkEncodeEnvelope(b *testing.B) {
	data, _ := json.Marshal(map[string]any{"fromWalletId": "2fYq1mZbXkL0aVdT3nQe5rWcPsH", "toWalletId": "2fYq1mZbXkL0aVdT3nQe5rWcPsI",
		"fromUserId": "2fYq1mZbXkL0aVdT3nQe5rWcPsJ", "toUserId": "2fYq1mZbXkL0aVdT3nQe5rWcPsK", "amount": 12345, "memo": "bench transfer"})
	env := Envelope{ID: "idem-0123456789abcdef0123456789abcdef01234567", Type: TypeFiatTransfer, SchemaVersion: 1,
		OccurredAt: time.Now().UTC(), Key: "2fYq1mZbXkL0aVdT3nQe5rWcPsH", CorrelationID: NewID(), ReplyTo: "gw-" + NewID(),
		ActorUserID: "2fYq1mZbXkL0aVdT3nQe5rWcPsJ", RequestHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Data: data}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Encode(env); err != nil {
				b.Fatal(err)
			}
		}
	})
}
