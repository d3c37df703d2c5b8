package fiat_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/broker"
)

// TestMixedBatchPipelined runs batches that mix every kind of fiat command
// (transfers, a deposit session and a deposit credit, a payout, a
// withdrawal, a donation, a refund) through the real runner: each batch
// takes the pipelined path (at most maxRoundTripsPerBatch round trips to
// Postgres), every command applies exactly once, and the redelivered batch
// is answered with the stored replies, byte for byte, changing nothing.
func TestMixedBatchPipelined(t *testing.T) {
	pool, url := pgtest.NewDB(t)
	kafka, err := broker.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fund(t, pool, "ma", 10_000_000), fund(t, pool, "mb", 0)
	cust, merch := fund(t, pool, "cust", 100_000), fund(t, pool, "merch", 0)
	auth := authorize(t, pool, cust, "cust", "merch", 100_000)
	camp := campaign(t, pool, 1_000_000, nil)
	// Two charges to refund, one per round.
	var charges []string
	for i := 0; i < 2; i++ {
		id := schemas.NewID()
		outs := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatMerchantCharge, cust, schemas.FiatMerchantCharge{
			ChargeID: id, MerchantUserID: "merch", MerchantKeyID: "k1", MerchantWalletID: merch, CustomerWalletID: cust,
			CustomerUserID: "cust", AuthorizationID: auth, Amount: 10_000, PaymentRef: "o-" + id})})
		if outs[0].Status != http.StatusCreated {
			t.Fatalf("charge: %d %s", outs[0].Status, outs[0].Body)
		}
		charges = append(charges, id)
	}
	openDeposit := func() string {
		id := schemas.NewID()
		outs := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositCreate, b, schemas.FiatDepositCreate{
			DepositID: id, SessionID: schemas.NewID(), URL: "https://pay.example/s", WalletID: b, UserID: "mb", Amount: 5_000})})
		if outs[0].Status != http.StatusCreated {
			t.Fatalf("deposit: %d %s", outs[0].Status, outs[0].Body)
		}
		return id
	}
	mixed := func(round int) []pipeline.Command {
		cmds := []pipeline.Command{
			transferCmd(t, a, b, "ma", "mb", 1_000),
			command(t, schemas.TypeFiatDepositCreate, a, schemas.FiatDepositCreate{DepositID: schemas.NewID(),
				SessionID: schemas.NewID(), URL: "https://pay.example/s", WalletID: a, UserID: "ma", Amount: 2_000}),
			command(t, schemas.TypeFiatDepositCredit, b, schemas.FiatDepositCredit{DepositID: openDeposit(), WalletID: b,
				EventID: "evt_" + schemas.NewID(), Amount: 5_000, Currency: "KZT"}),
			command(t, schemas.TypeFiatPayoutRequest, a, schemas.FiatPayoutRequest{PayoutID: schemas.NewID(), WalletID: a,
				UserID: "ma", Amount: 3_000, BankAccount: "sealed", BankAccountHint: "1234"}),
			command(t, schemas.TypeFiatWithdraw, a, schemas.FiatWithdraw{WalletID: a, UserID: "ma", Amount: 500, Destination: "card"}),
			donateCmd(t, camp, a, "ma", 4_000, false),
			command(t, schemas.TypeFiatRefund, cust, schemas.FiatRefund{RefundID: schemas.NewID(), Source: schemas.RefundSourceCharge,
				ChargeID: charges[round], RefunderUserID: "merch", FromWalletID: merch, CustomerWalletID: cust, Amount: 1_000}),
			transferCmd(t, b, a, "mb", "ma", 700),
		}
		for i := range cmds {
			cmds[i].Env.ReplyTo = "mixed-test"
		}
		return cmds
	}
	want := []int{http.StatusOK, http.StatusCreated, http.StatusOK, http.StatusCreated, http.StatusCreated, http.StatusCreated,
		http.StatusCreated, http.StatusOK}

	counted, rt := countedPool(t, url)
	cl, err := topics.NewClient(kafka.Addrs(), kgo.ConsumeTopics(topics.GatewayReplies),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var metrics *pipeline.Metrics // set when the runner starts
	batches := func() uint64 { return batchCount(t, metrics) }
	// awaitReplies reads the next n replies, by command id.
	awaitReplies := func(n int) map[string]schemas.Reply {
		got := map[string]schemas.Reply{}
		deadline := time.Now().Add(30 * time.Second)
		for len(got) < n {
			pctx, pcancel := context.WithDeadline(ctx, deadline)
			fs := cl.PollFetches(pctx)
			pcancel()
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d replies", len(got), n)
			}
			fs.EachRecord(func(r *kgo.Record) {
				env, err := schemas.Decode(r.Value)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := schemas.DataAs[schemas.Reply](env)
				if err != nil {
					t.Fatal(err)
				}
				got[rep.CommandID] = rep
			})
		}
		return got
	}
	// send publishes cmds in one produce and waits for a reply to each.
	send := func(cmds []pipeline.Command) map[string]schemas.Reply {
		recs := make([]*kgo.Record, len(cmds))
		for i, c := range cmds {
			if recs[i], err = topics.Record(topics.FiatCommands, c.Env); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		return awaitReplies(len(cmds))
	}
	check := func(cmds []pipeline.Command, got map[string]schemas.Reply, replayed bool) {
		t.Helper()
		for i, c := range cmds {
			r := got[c.Env.ID]
			if r.Status != want[i] || r.Replayed != replayed {
				t.Fatalf("command %d (%s): %d replayed=%v %s, want %d replayed=%v", i, c.Env.Type, r.Status, r.Replayed, r.Body,
					want[i], replayed)
			}
		}
	}
	state := func() [5]int64 {
		return [5]int64{
			scalar(t, pool, `SELECT sum(balance)::bigint FROM fiat_wallets WHERE kind = 'user'`),
			scalar(t, pool, `SELECT count(*) FROM fiat_transactions`),
			scalar(t, pool, `SELECT count(*) FROM fiat_refunds`) + 100*scalar(t, pool, `SELECT count(*) FROM charity_donations`),
			scalar(t, pool, `SELECT count(*) FROM fiat_deposits`) + 100*scalar(t, pool, `SELECT count(*) FROM fiat_payouts`),
			scalar(t, pool, `SELECT raised_kzt FROM charity_campaigns WHERE id = $1`, camp.CampaignID),
		}
	}

	// Round 1 is produced before the runner starts, so one poll holds it
	// all: it prepares the statements. Round 2 is measured.
	first := mixed(0)
	recs1 := make([]*kgo.Record, len(first))
	for i, c := range first {
		if recs1[i], err = topics.Record(topics.FiatCommands, c.Env); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.ProduceSync(ctx, recs1...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	metrics, wait := startRunner(t, ctx, kafka.Addrs(), counted, h)
	check(first, awaitReplies(len(first)), false)
	if n := batches(); n != 1 {
		t.Fatalf("the first mixed round took %d batches, want 1", n)
	}
	if n := scalar(t, pool, `SELECT raised_kzt FROM charity_campaigns WHERE id = $1`, camp.CampaignID); n != 4_000 {
		t.Fatalf("campaign raised %d, want 4000", n)
	}

	second := mixed(1)
	before := state()
	rt0, b0 := rt.count(), batches()
	firstReplies := send(second)
	check(second, firstReplies, false)
	n, nb := rt.count()-rt0, batches()-b0
	if nb == 0 || float64(n)/float64(nb) > maxRoundTripsPerBatch {
		t.Fatalf("%d round trips over %d batches of mixed commands, want at most %d per batch", n, nb, maxRoundTripsPerBatch)
	}
	t.Logf("mixed round: %d round trips over %d batches", n, nb)
	after := state()
	fees := schemas.TransferFee(1_000) + schemas.TransferFee(700)
	if after[0] != before[0]-4_000-3_000-500+5_000-fees || after[1] == before[1] || after[4] != 8_000 {
		t.Fatalf("second round: state %v -> %v", before, after)
	}

	// The second round redelivered: stored replies, nothing applied again.
	again := send(second)
	check(second, again, true)
	for id, r := range firstReplies {
		if string(again[id].Body) != string(r.Body) {
			t.Fatalf("replay of %s: %s, first answer %s", id, again[id].Body, r.Body)
		}
	}
	if st := state(); st != after {
		t.Fatalf("redelivery changed the state: %v -> %v", after, st)
	}
	cancel()
	wait()
}
