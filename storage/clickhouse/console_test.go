package clickhouse

import (
	"context"
	"testing"
	"time"
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
