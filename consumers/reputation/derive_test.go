package reputation

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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

// applyOn makes a database with the given users and returns it with a
// function that applies commands through the reputation applier in one
// committed transaction.
func applyOn(t *testing.T, users ...string) (*pgxpool.Pool, func(cmds ...pipeline.Command) []pipeline.Outcome) {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	for _, id := range users {
		if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, password_hash) VALUES ($1, $1 || '@x.test', 'x')`, id); err != nil {
			t.Fatal(err)
		}
	}
	a := NewApplier(time.Now)
	return pool, func(cmds ...pipeline.Command) []pipeline.Outcome {
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
}

// TestDerivedReputation applies the events of the money path as the
// reputation applier reads them from events.fiat and events.charity: each
// earns the spec's table once per source, however often it is read, a
// donation below the minimum earns nothing, two donations of one donor to
// one campaign on one day count once, and events with no rule, or from a
// topic their rule does not read, earn nothing.
func TestDerivedReputation(t *testing.T) {
	pool, apply := applyOn(t, "alice", "bob")
	ctx := context.Background()
	wa, wb := schemas.NewID(), schemas.NewID()
	for w, u := range map[string]string{wa: "alice", wb: "bob"} {
		if _, err := pool.Exec(ctx, `INSERT INTO fiat_wallets (id, user_id, currency) VALUES ($1, $2, 'KZT')`, w, u); err != nil {
			t.Fatal(err)
		}
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
		// The next day: wallet-active counts once a day.
		eventCmd(t, topics.EventsFiat, schemas.TypeRequestPaid, wa, "alice",
			schemas.RequestPaid{RequestID: "r1", WalletID: wa, PayerWalletID: wb, TransactionID: "tx2", Amount: 1_000, Currency: "KZT"}, day.Add(24*time.Hour)),
		eventCmd(t, topics.EventsFiat, schemas.TypeDepositCompleted, wb, "bob",
			schemas.DepositCompleted{DepositID: "d1", WalletID: wb, TransactionID: "tx3", Amount: 1_000, Currency: "KZT"}, day),
		eventCmd(t, topics.EventsFiat, schemas.TypeWithdrawalCompleted, wb, "bob",
			schemas.WithdrawalCompleted{WithdrawalID: "w1", WalletID: wb, TransactionID: "tx4", Amount: 1_000, Currency: "KZT"}, day),
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

// TestDerivedSourcesBeforeTheDailyRule: a money movement's source is its
// UTC day, and it remembers the per-transaction source the same credit had
// before, so that events re-read after the upgrade count nothing twice.
func TestDerivedSourcesBeforeTheDailyRule(t *testing.T) {
	at := time.Date(2026, 1, 2, 23, 59, 0, 0, time.FixedZone("x", 3*3600))
	if got := DonorSource("c1", at); got != "donation:c1:2026-01-02" {
		t.Fatalf("donor source %q", got)
	}
	env := schemas.Envelope{OccurredAt: at}
	evs := bothParties(env, "p", "q", "tx")
	if len(evs) != 2 || evs[0].SourceID != "day:2026-01-02" || evs[1].SourceID != "day:2026-01-02" ||
		evs[0].Before != "tx:from" || evs[1].Before != "tx:to" || evs[0].Kind != schemas.RepKindWalletActive {
		t.Fatalf("both parties %+v", evs)
	}
	got := Topics()
	if len(got) != 3 || got[0] != topics.ReputationCommands || got[1] != topics.EventsCharity || got[2] != topics.EventsFiat {
		t.Fatalf("topics %v", got)
	}
}

// TestMoneyReputationIsDailyAndFromTenKzt: a movement below 10 KZT (or
// 1 USD) earns nothing; ten transfers, paid requests or payouts of one day
// earn once per user and kind; the next UTC day counts again; an event
// credited under the per-transaction source before the upgrade and read
// again earns nothing more.
func TestMoneyReputationIsDailyAndFromTenKzt(t *testing.T) {
	users := []string{"alice", "bob", "carol", "dave"}
	pool, applied := applyOn(t, users...)
	ctx := context.Background()
	wa, wb, wc, wd := schemas.NewID(), schemas.NewID(), schemas.NewID(), schemas.NewID()
	for _, w := range []struct{ id, user, cur string }{{wa, "alice", "KZT"}, {wb, "bob", "KZT"}, {wc, "carol", "USD"}, {wd, "dave", "USD"}} {
		if _, err := pool.Exec(ctx, `INSERT INTO fiat_wallets (id, user_id, currency) VALUES ($1, $2, $3)`, w.id, w.user, w.cur); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(cmds ...pipeline.Command) { applied(cmds...) }
	score := func(user string) int64 {
		t.Helper()
		s, _, err := reputation.NewStore(pool).ScoreOf(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		return s.Score
	}
	want := func(what string, scores ...int64) {
		t.Helper()
		for i, w := range scores {
			if got := score(users[i]); got != w {
				t.Fatalf("%s: %s has %d, want %d", what, users[i], got, w)
			}
		}
	}
	transfer := func(from, to string, actor string, amount int64, at time.Time) pipeline.Command {
		return eventCmd(t, topics.EventsFiat, schemas.TypeTransferCompleted, from, actor,
			schemas.TransferCompleted{TxID: schemas.NewID(), FromWallet: from, ToWallet: to, AmountKzt: amount, FeeKzt: 1}, at)
	}
	withdrawal := func(amount int64, at time.Time) pipeline.Command {
		return eventCmd(t, topics.EventsFiat, schemas.TypeWithdrawalCompleted, wa, "alice",
			schemas.WithdrawalCompleted{WithdrawalID: schemas.NewID(), WalletID: wa, TransactionID: schemas.NewID(), Amount: amount, Currency: "KZT"}, at)
	}
	deposit := func(amount int64, at time.Time) pipeline.Command {
		return eventCmd(t, topics.EventsFiat, schemas.TypeDepositCompleted, wb, "bob",
			schemas.DepositCompleted{DepositID: schemas.NewID(), WalletID: wb, TransactionID: schemas.NewID(), Amount: amount, Currency: "KZT"}, at)
	}
	request := func(amount int64, at time.Time) pipeline.Command {
		return eventCmd(t, topics.EventsFiat, schemas.TypeRequestPaid, wa, "alice",
			schemas.RequestPaid{RequestID: schemas.NewID(), WalletID: wa, PayerWalletID: wb, TransactionID: schemas.NewID(),
				Amount: amount, Currency: "KZT"}, at)
	}
	day := time.Date(2026, 11, 26, 0, 0, 1, 0, time.UTC)

	apply(transfer(wa, wb, "alice", 1, day), withdrawal(1, day), deposit(1, day), request(1, day),
		transfer(wa, wb, "alice", schemas.DonationReputationMinKzt-1, day), withdrawal(schemas.DonationReputationMinKzt-1, day))
	want("one-tiyn and 9.99 KZT movements", 0, 0, 0, 0)

	for i := 0; i < 10; i++ {
		at := day.Add(time.Duration(i) * time.Hour)
		apply(transfer(wa, wb, "alice", schemas.DonationReputationMinKzt, at), withdrawal(schemas.DonationReputationMinKzt, at),
			request(schemas.DonationReputationMinKzt, at))
	}
	apply(transfer(wb, wa, "bob", 5_000, day), transfer(wb, wa, "bob", 5_000, day.Add(23*time.Hour)))
	// alice: wallet-active +1, payout +3; bob: wallet-active +1.
	want("ten 10-KZT transfers, payouts and requests in one day, and five back", 4, 1, 0, 0)

	next := day.Add(24 * time.Hour)
	apply(transfer(wa, wb, "alice", schemas.DonationReputationMinKzt, next), deposit(schemas.DonationReputationMinKzt, next),
		deposit(schemas.DonationReputationMinKzt, next))
	want("the next UTC day", 5, 4, 0, 0)

	apply(transfer(wc, wd, "carol", 99, day))
	want("99 US cents", 5, 4, 0, 0)
	apply(transfer(wc, wd, "carol", 100, day), transfer(wc, wd, "carol", 100, day))
	want("1 USD twice", 5, 4, 1, 1)

	// Credited as txOld:from before the upgrade (alice only), then read again.
	third := next.Add(24 * time.Hour)
	old := transfer(wa, wb, "alice", schemas.DonationReputationMinKzt, third)
	d, _ := schemas.DataAs[schemas.TransferCompleted](old.Env)
	if _, err := pool.Exec(ctx, `INSERT INTO reputation_events (id, user_id, kind, source_module, weight, source_id,
    score_after, rank_before, rank_after, seq, created_at) VALUES ($1, 'alice', $2, 'fiat', 1, $3, 6, 'seedling', 'seedling', 99, now())`,
		schemas.NewID(), schemas.RepKindWalletActive, d.TxID+":from"); err != nil {
		t.Fatal(err)
	}
	apply(old)
	want("an event credited before the upgrade, read again", 5, 5, 1, 1)
}
