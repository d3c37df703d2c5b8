package fiat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/ksuid"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// applied is what one application of a batch minted: the replies, the
// emitted envelopes (topic, id, data) and the ids of the rows it wrote.
type applied struct {
	replies, events, txs, audit []string
}

// TestReapplyMintsSameIDs applies a batch, rolls it back (as a
// point-in-time restore loses it) and applies the same commands again a
// while later: the transaction, withdrawal and audit ids, the ledger
// sources and the event ids are those of the first application, so the
// ledger appender, which re-reads the first application's ledger.append
// records, and the event sinks dedupe the second.
func TestReapplyMintsSameIDs(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	a, b := fund(t, pool, "ra", 1_000_000), fund(t, pool, "rb", 0)
	cmd := func(typ, key, actor string, data any) pipeline.Command {
		env, err := schemas.New(typ, key, actor, data, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.Command{Env: env, Topic: topics.FiatCommands}
	}
	cmds := []pipeline.Command{
		transferCmd(t, a, b, "ra", "rb", 1_000),
		transferCmd(t, a, b, "ra", "rb", 2_000),
		cmd(schemas.TypeFiatWithdraw, a, "ra", schemas.FiatWithdraw{WalletID: a, UserID: "ra", Amount: 500, DestinationHint: "****1234"}),
		cmd(schemas.TypeFiatPayoutRequest, a, "ra", schemas.FiatPayoutRequest{PayoutID: schemas.NewID(), WalletID: a,
			UserID: "ra", Amount: 700, BankAccount: "KZ000000000000001234"}),
	}
	clock := time.Now()
	h, err := cfiat.NewHandler(caps, func() time.Time { return clock }, quiet)
	if err != nil {
		t.Fatal(err)
	}
	apply := func() applied {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		out, err := h.Apply(ctx, tx, cmds)
		if err != nil {
			t.Fatal(err)
		}
		var got applied
		for _, o := range out {
			got.replies = append(got.replies, fmt.Sprintf("%d %s", o.Status, o.Body))
			for _, e := range o.Emit {
				got.events = append(got.events, fmt.Sprintf("%s %s %s", e.Topic, e.Env.ID, e.Env.Data))
			}
		}
		got.txs = ids(t, tx, `SELECT id FROM fiat_transactions ORDER BY id`)
		got.audit = ids(t, tx, `SELECT id FROM fiat_audit WHERE action IN ('transfer', 'withdrawal', 'payout.hold') ORDER BY id`)
		return got
	}
	first := apply()
	clock = clock.Add(time.Hour) // the restore and the re-application come later
	second := apply()

	if len(first.txs) != 4 || len(first.audit) != 4 {
		t.Fatalf("first application wrote %d transactions and %d audit rows, want 4 and 4", len(first.txs), len(first.audit))
	}
	for _, c := range []struct {
		what          string
		first, second []string
	}{{"transaction ids", first.txs, second.txs}, {"audit ids", first.audit, second.audit}, {"events", first.events, second.events}} {
		if !slices.Equal(c.first, c.second) {
			t.Errorf("re-applied, the %s differ:\nfirst  %q\nsecond %q", c.what, c.first, c.second)
		}
	}
	// The replies carry createdAt (the clock of the application) and the
	// payout reply its createdAt: compare their ids.
	for i := range first.replies {
		if f, s := replyIDs(t, first.replies[i]), replyIDs(t, second.replies[i]); f != s || f == "" {
			t.Errorf("reply %d ids: first %q, second %q", i, f, s)
		}
	}
	var ledgerSources, eventIDs []string
	for _, e := range first.events {
		f := strings.SplitN(e, " ", 3)
		topic, id, data := f[0], f[1], []byte(f[2])
		eventIDs = append(eventIDs, id)
		if topic == topics.LedgerAppend {
			var la schemas.LedgerAppend
			if err := json.Unmarshal(data, &la); err != nil {
				t.Fatal(err)
			}
			ledgerSources = append(ledgerSources, la.SourceID)
		}
		if _, err := ksuid.Parse(id); err != nil {
			t.Errorf("event id %s is not a ksuid: %v", id, err)
		}
	}
	// The two transfers and the withdrawal append to the ledger; the payout
	// hold does once it is decided.
	if len(ledgerSources) != 3 {
		t.Errorf("ledger sources %v, want those of the transfers and the withdrawal", ledgerSources)
	}
	for _, src := range ledgerSources {
		if !slices.Contains(first.txs, src) {
			t.Errorf("ledger source %s names no transaction of %v", src, first.txs)
		}
	}
	all := slices.Concat(first.txs, first.audit, eventIDs)
	slices.Sort(all)
	if len(slices.Compact(all)) != len(first.txs)+len(first.audit)+len(eventIDs) {
		t.Errorf("one application minted an id twice: %v", all)
	}
}

func ids(t *testing.T, tx pgx.Tx, sql string) []string {
	t.Helper()
	rows, err := tx.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replyIDs returns the ids a reply names (status, transaction, withdrawal,
// payout).
func replyIDs(t *testing.T, reply string) string {
	t.Helper()
	status, body, _ := strings.Cut(reply, " ")
	var v struct {
		TransactionID string `json:"transactionId"`
		WithdrawalID  string `json:"withdrawalId"`
		ID            string `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("reply %s: %v", reply, err)
	}
	if v.TransactionID == "" && v.WithdrawalID == "" && v.ID == "" {
		return ""
	}
	return fmt.Sprintf("%s %s %s %s", status, v.TransactionID, v.WithdrawalID, v.ID)
}
