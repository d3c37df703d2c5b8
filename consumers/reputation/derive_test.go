package reputation

import (
	"context"
	"testing"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

func eventCmd(t *testing.T, topic, typ, key, actor string, data any, at time.Time) pipeline.Command {
	t.Helper()
	env, err := schemas.New(typ, key, actor, data, at)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Command{Env: env, Topic: topic}
}

// TestDerivedReputation applies the events of the money path as the
// reputation applier reads them from events.fiat and events.charity: each
// earns the spec's table once per source, however often it is read, a
// donation below the minimum earns nothing, two donations of one donor to
// one campaign on one day count once, and events with no rule, or from a
// topic their rule does not read, earn nothing.
func TestDerivedReputation(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	for _, id := range []string{"alice", "bob"} {
		if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ($1, $1 || '@x.test', 'x')`, id); err != nil {
			t.Fatal(err)
		}
	}
	wa, wb := schemas.NewID(), schemas.NewID()
	for w, u := range map[string]string{wa: "alice", wb: "bob"} {
		if _, err := pool.Exec(ctx, `INSERT INTO fiat_wallets (id, user_id, currency) VALUES ($1, $2, 'KZT')`, w, u); err != nil {
			t.Fatal(err)
		}
	}
	a := NewApplier(time.Now)
	apply := func(cmds ...pipeline.Command) []pipeline.Outcome {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		out, err := a.Apply(ctx, tx, cmds)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return out
	}
	day := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	campA, campB := schemas.NewID(), schemas.NewID()
	donation := func(camp string, amount int64, anonymous bool, at time.Time) pipeline.Command {
		return eventCmd(t, topics.EventsCharity, schemas.TypeDonationReceived, camp, "alice",
			schemas.DonationReceived{DonationID: schemas.NewID(), CampaignID: camp, AmountKzt: amount, Anonymous: anonymous, CreatedAt: at}, at)
	}
	transfer := eventCmd(t, topics.EventsFiat, schemas.TypeTransferCompleted, wa, "alice",
		schemas.TransferCompleted{TxID: "tx1", FromWallet: wa, ToWallet: wb, AmountKzt: 5_000, FeeKzt: 5}, day)
	batch := []pipeline.Command{
		transfer,
		eventCmd(t, topics.EventsFiat, schemas.TypeRequestPaid, wa, "alice",
			schemas.RequestPaid{RequestID: "r1", WalletID: wa, PayerWalletID: wb, TransactionID: "tx2", Amount: 100}, day),
		eventCmd(t, topics.EventsFiat, schemas.TypeDepositCompleted, wb, "bob",
			schemas.DepositCompleted{DepositID: "d1", WalletID: wb, TransactionID: "tx3", Amount: 100, Currency: "KZT"}, day),
		eventCmd(t, topics.EventsFiat, schemas.TypeWithdrawalCompleted, wb, "bob",
			schemas.WithdrawalCompleted{WithdrawalID: "w1", WalletID: wb, TransactionID: "tx4", Amount: 100, Currency: "KZT"}, day),
		donation(campA, schemas.DonationReputationMinKzt-1, false, day),
		donation(campA, schemas.DonationReputationMinKzt, true, day),
		donation(campA, schemas.DonationReputationMinKzt*3, false, day.Add(time.Hour)),
		donation(campB, schemas.DonationReputationMinKzt, false, day),
		donation(campA, schemas.DonationReputationMinKzt, false, day.Add(24*time.Hour)),
		eventCmd(t, topics.EventsFiat, schemas.TypeTransferFailed, wa, "alice",
			schemas.TransferFailed{FromWallet: wa, ToWallet: wb, AmountKzt: 1, Reason: "insufficient_balance"}, day),
		// A rule reads its own topic only.
		eventCmd(t, topics.EventsGov, schemas.TypeDepositCompleted, wb, "bob",
			schemas.DepositCompleted{DepositID: "d2", WalletID: wb, TransactionID: "tx5", Amount: 100}, day),
		transfer, // read twice in one batch
	}
	out := apply(batch...)
	for i, o := range out {
		if o.Status != 200 || !o.Unrecorded || o.Body != nil {
			t.Fatalf("event %d answered %d %s unrecorded=%v", i, o.Status, o.Body, o.Unrecorded)
		}
	}
	emitted := func(o pipeline.Outcome) (users []string) {
		for _, e := range o.Emit {
			if e.Env.Type == schemas.TypeScoreUpdated && e.Topic == topics.EventsReputation {
				users = append(users, e.Env.Key)
			}
		}
		return users
	}
	if u := emitted(out[0]); len(u) != 2 || u[0] != "alice" || u[1] != "bob" {
		t.Fatalf("a transfer updates %v, want alice then bob", u)
	}
	if u := emitted(out[1]); len(u) != 2 || u[0] != "bob" || u[1] != "alice" {
		t.Fatalf("a paid request updates %v, want the payer bob then the payee alice", u)
	}
	if u := emitted(out[len(out)-1]); len(u) != 0 {
		t.Fatalf("the transfer read twice counted again: %v", u)
	}
	// And once more in a later batch: nothing changes.
	if again := apply(transfer, batch[2]); len(again[0].Emit)+len(again[1].Emit) != 0 {
		t.Fatalf("a redelivered event emitted %+v %+v", again[0].Emit, again[1].Emit)
	}

	// alice: transfer +1, request +1, donations: campA day 1 (+4 once for
	// two, the one below the minimum earns nothing), campB +4, campA day 2
	// +4. bob: transfer +1, request +1, deposit +2, withdrawal +3.
	st := reputation.NewStore(pool)
	for user, want := range map[string]struct{ score, events int64 }{"alice": {14, 5}, "bob": {7, 4}} {
		s, _, err := st.ScoreOf(ctx, user)
		if err != nil || s.Score != want.score || s.EventCount != want.events {
			t.Fatalf("%s: score %d over %d events, want %d over %d (%v)", user, s.Score, s.EventCount, want.score, want.events, err)
		}
	}
	var sources int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT source_id) FROM reputation_events WHERE kind = $1`,
		schemas.RepKindCharityDonor).Scan(&sources); err != nil || sources != 3 {
		t.Fatalf("%d charity-donor sources, want 3 (%v)", sources, err)
	}
}

// TestDerivedSourcesMatchTheCommands: the derived events carry the source
// ids the fiat applier put on its reputation commands before, so a
// deployment that upgrades while commands are in flight, and re-reads the
// events from the start, counts nothing twice.
func TestDerivedSourcesMatchTheCommands(t *testing.T) {
	at := time.Date(2026, 1, 2, 23, 59, 0, 0, time.FixedZone("x", 3*3600))
	if got := DonorSource("c1", at); got != "donation:c1:2026-01-02" {
		t.Fatalf("donor source %q", got)
	}
	evs := bothParties("p", "q", "tx")
	if len(evs) != 2 || evs[0].SourceID != "tx:from" || evs[1].SourceID != "tx:to" || evs[0].Kind != schemas.RepKindWalletActive {
		t.Fatalf("both parties %+v", evs)
	}
	got := Topics()
	if len(got) != 3 || got[0] != topics.ReputationCommands || got[1] != topics.EventsCharity || got[2] != topics.EventsFiat {
		t.Fatalf("topics %v", got)
	}
}
