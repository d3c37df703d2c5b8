package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/ksuid"
)

// TestFlowDedupe counts transfers per second from the events and transfer
// volume per currency and second from the ledger copy, each record once
// although the sink inserted some twice, and nothing before since.
func TestFlowDedupe(t *testing.T) {
	conn, db := testDB(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Second).Add(-10 * time.Second)
	tr := func(id string, at time.Time) EventRow {
		return EventRow{ID: id, Topic: "events.fiat", Type: "transfer.completed", OccurredAt: at, Data: `{"amountKzt":1}`}
	}
	entry := func(id, kind, currency string, amount int64, at time.Time) LedgerRow {
		return LedgerRow{ID: id, Kind: kind, AmountCents: amount, HasAmount: true, Currency: currency, Timestamp: at}
	}
	rows := Rows{
		Events: []EventRow{tr("t1", t0), tr("t1", t0), tr("t2", t0), tr("t3", t0.Add(time.Second)), tr("old", t0.Add(-time.Hour)),
			{ID: "d1", Topic: "events.fiat", Type: "deposit.completed", OccurredAt: t0, Data: `{}`}},
		Ledger: []LedgerRow{entry("l1", "fiat:transfer", "KZT", 100, t0), entry("l1", "fiat:transfer", "KZT", 100, t0),
			entry("l2", "fiat:transfer", "USD", 7, t0), entry("l3", "fiat:transfer", "KZT", 5, t0.Add(time.Second)),
			entry("l4", "fiat:deposit", "KZT", 1000, t0)},
	}
	if err := Insert(ctx, conn, db, rows); err != nil {
		t.Fatal(err)
	}
	f, err := QueryFlow(ctx, conn, db, t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	s := t0.Unix()
	if len(f.Transfers) != 2 || f.Transfers[s] != 2 || f.Transfers[s+1] != 1 {
		t.Errorf("transfers %v, want 2 at %d and 1 at %d", f.Transfers, s, s+1)
	}
	if len(f.Volume) != 2 || f.Volume["KZT"][s] != 100 || f.Volume["KZT"][s+1] != 5 || f.Volume["USD"][s] != 7 {
		t.Errorf("volume %v", f.Volume)
	}
}

// BenchmarkFlow100k reads the console's five-minute flow from a copy of
// 100,000 transfers (each an event and a ledger entry, ids minted at their
// time as the platform's ksuids are): 90,000 over the previous 30 days and
// 10,000 in the last five minutes.
//
//	go test ./storage/clickhouse -run '^$' -bench Flow100k -benchtime 20x
func BenchmarkFlow100k(b *testing.B) {
	conn, db := testDB(b)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	var rows Rows
	for i := range 100_000 {
		at := now.Add(-time.Duration(i%300) * time.Second)
		if i >= 10_000 {
			at = now.Add(-5*time.Minute - time.Duration(i)*26*time.Second)
		}
		id := func() string { k, _ := ksuid.FromParts(at, []byte(fmt.Sprintf("%016d", i))); return k.String() }
		rows.Events = append(rows.Events, EventRow{ID: id(), Topic: "events.fiat", Type: "transfer.completed", OccurredAt: at, Data: `{}`})
		cur := "KZT"
		if i%3 == 0 {
			cur = "USD"
		}
		rows.Ledger = append(rows.Ledger, LedgerRow{ID: id() + "l", Kind: "fiat:transfer", AmountCents: int64(i), HasAmount: true, Currency: cur, Timestamp: at})
	}
	if err := Insert(ctx, conn, db, rows); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		f, err := QueryFlow(ctx, conn, db, now.Add(-5*time.Minute))
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for _, c := range f.Transfers {
			n += c
		}
		if n != 10_000 {
			b.Fatalf("%d transfers in the window, want 10000", n)
		}
	}
}
