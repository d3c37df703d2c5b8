package console

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestLiveCounts buckets transfers by their event's second and transfer
// volume by the ledger entry's second and currency, ignores other entries
// and events, keeps fiat events for the latest list, and drops seconds
// older than the window.
func TestLiveCounts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	l := NewLive(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now }, time.Minute)
	rec := func(topic, typ, value string) *kgo.Record {
		return &kgo.Record{Topic: topic, Value: []byte(value), Headers: []kgo.RecordHeader{{Key: "type", Value: []byte(typ)}}}
	}
	const at = `"occurredAt":"2026-11-26T07:59:58.5Z"`
	for _, r := range []*kgo.Record{
		rec(topics.EventsFiat, schemas.TypeTransferCompleted, `{"id":"e1",`+at+`,"data":{"description":"<b>x</b>"}}`),
		rec(topics.EventsFiat, schemas.TypeTransferCompleted, `{"id":"e2",`+at+`,"data":{}}`),
		rec(topics.EventsFiat, "deposit.completed", `{"id":"e3",`+at+`,"data":{}}`),
		rec(topics.EventsLedger, schemas.TypeLedgerEntryAdded, `{"id":"l1",`+at+`,"data":{"kind":"fiat:transfer","amountCents":150,"currency":"USD","timestamp":"2026-11-26T07:59:59.000001Z"}}`),
		rec(topics.EventsLedger, schemas.TypeLedgerEntryAdded, `{"id":"l2",`+at+`,"data":{"kind":"fiat:transfer","amountCents":50,"currency":"USD","timestamp":"2026-11-26T07:59:59.9Z"}}`),
		rec(topics.EventsLedger, schemas.TypeLedgerEntryAdded, `{"id":"l3",`+at+`,"data":{"kind":"fiat:deposit","amountCents":999,"currency":"KZT","timestamp":"2026-11-26T07:59:59Z"}}`),
		rec(topics.EventsFiat, schemas.TypeTransferCompleted, `{"id":"old","occurredAt":"2026-11-26T07:50:00Z","data":{}}`),
		rec(topics.EventsFiat, schemas.TypeTransferCompleted, `not json`),
	} {
		l.count(r)
	}
	l.prune()
	s58, s59 := now.Add(-2*time.Second).Unix(), now.Add(-time.Second).Unix()
	if len(l.flow.Transfers) != 1 || l.flow.Transfers[s58] != 2 {
		t.Errorf("transfers per second %v, want 2 at %d", l.flow.Transfers, s58)
	}
	if len(l.flow.Volume) != 1 || l.flow.Volume["USD"][s59] != 200 {
		t.Errorf("volume %v, want USD 200 at %d", l.flow.Volume, s59)
	}
	if len(l.recent) != 4 || l.recent[0].ID != "e1" || l.recent[0].Data != `{"description":"<b>x</b>"}` || l.recent[2].Type != "deposit.completed" {
		t.Errorf("recent events %+v", l.recent)
	}
}
