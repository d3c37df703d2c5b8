package ledger

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/audit"
	sfiat "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// validChain is a chain walk that always holds.
type validChain struct{}

func (validChain) Verify(context.Context) (ledger.VerifyResult, error) {
	return ledger.VerifyResult{Valid: true, Height: 1}, nil
}

// emptyAppends is a ledger.append topic with nothing on it.
type emptyAppends struct{}

func (emptyAppends) Spans(context.Context, ...string) ([]topics.Span, error) {
	return []topics.Span{{Topic: topics.LedgerAppend}}, nil
}

func (emptyAppends) Read(context.Context, topics.Span, int64, int) ([]*kgo.Record, error) {
	return nil, nil
}

// TestAuditFailsOnATamperedDatabase: the background audit's failed-checks
// gauge is 0 on a consistent database, and 1 for the check that names a
// deleted entry or an entry whose record is gone; each run is recorded for
// the console, and the last-run gauge moves.
func TestAuditFailsOnATamperedDatabase(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `
INSERT INTO fiat_wallets (id, user_id, currency, balance) VALUES ('w1', 'u1', 'KZT', 1000);
INSERT INTO fiat_transactions (id, kind, status, to_wallet, to_user, amount, currency, created_at)
    VALUES ('t1', 'deposit', 'completed', 'w1', 'u1', 1000, 'KZT', now())`); err != nil {
		t.Fatal(err)
	}
	entry := ledger.Entry{ID: "e1", Height: 1, Kind: schemas.LedgerKindDeposit, ActorUserID: "u1", SourceID: "t1",
		Timestamp: time.Now().UTC(), PrevHash: ledger.GenesisPrevHash, Hash: ledger.GenesisPrevHash}
	if err := ledger.Insert(ctx, pool, []ledger.Entry{entry}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := NewAuditMetrics(reg)
	src := SQLSource{Label: "fiat transactions", Table: "fiat_transactions",
		EntryKinds: []string{schemas.LedgerKindDeposit, schemas.LedgerKindTransfer}, Query: sfiat.MissingLedgerEntriesSQL}
	clock := time.Unix(1_800_000_000, 0)
	a := NewAuditor(validChain{}, pool, time.Hour, func() time.Time { return clock }, slog.New(slog.NewTextHandler(io.Discard, nil))).
		WithChecks(NewCrossCheck([]Source{src}, emptyAppends{}, 1000), pool, m)
	failed := func(check string) float64 { return gauge(t, reg, "platform_audit_failed_checks", check) }
	audited := func(when string, want map[string]float64) {
		t.Helper()
		if err := a.AuditOnce(ctx); err != nil {
			t.Fatal(err)
		}
		for check, v := range want {
			if got := failed(check); got != v {
				t.Errorf("%s: platform_audit_failed_checks{check=%q} = %v, want %v", when, check, got, v)
			}
		}
		if got := gauge(t, reg, "platform_audit_last_run_timestamp_seconds", ""); got != float64(clock.Unix()) {
			t.Errorf("%s: last run %v, want %v", when, got, clock.Unix())
		}
		run, ok, err := audit.NewStore(pool).Latest(ctx)
		if err != nil || !ok || len(run.Results) != 3 || !run.At.Equal(clock) {
			t.Fatalf("%s: recorded run %+v %v %v", when, run, ok, err)
		}
		for _, r := range run.Results {
			if (r.Status == audit.Failed) != (want[r.Check] == 1) {
				t.Errorf("%s: recorded %s %s %s", when, r.Check, r.Status, r.Detail)
			}
		}
		clock = clock.Add(time.Hour)
	}
	audited("consistent", map[string]float64{CheckChain: 0, CheckSourcesAnchored: 0, CheckEntriesSourced: 0})

	if _, err := pool.Exec(ctx, `DELETE FROM ledger_entries WHERE source_id = 't1'`); err != nil {
		t.Fatal(err)
	}
	audited("the entry deleted", map[string]float64{CheckChain: 0, CheckSourcesAnchored: 1, CheckEntriesSourced: 0})

	entry.SourceID = "gone"
	if err := ledger.Insert(ctx, pool, []ledger.Entry{entry}); err != nil {
		t.Fatal(err)
	}
	audited("an entry for a record that does not exist", map[string]float64{CheckChain: 0, CheckSourcesAnchored: 1, CheckEntriesSourced: 1})

	// Two entries naming one record (of two kinds: one kind twice is
	// refused by the unique index).
	if _, err := pool.Exec(ctx, `DELETE FROM ledger_entries`); err != nil {
		t.Fatal(err)
	}
	second := entry
	entry.SourceID = "t1"
	second.ID, second.Height, second.SourceID, second.Kind = "e2", 2, "t1", schemas.LedgerKindTransfer
	if err := ledger.Insert(ctx, pool, []ledger.Entry{entry, second}); err != nil {
		t.Fatal(err)
	}
	audited("a record named by two entries", map[string]float64{CheckChain: 0, CheckSourcesAnchored: 1, CheckEntriesSourced: 0})
	run, _, err := audit.NewStore(pool).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if r.Check == CheckSourcesAnchored && !strings.Contains(r.Detail, "1 records are named by more than one entry: t1") {
			t.Errorf("a record named by two entries: %s", r.Detail)
		}
	}
}

// gauge reads a gauge from reg: the series whose "check" label is check
// ("" for an unlabelled gauge); -1 when there is none.
func gauge(t *testing.T, reg *prometheus.Registry, name, check string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			label := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "check" {
					label = l.GetValue()
				}
			}
			if label == check {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}
