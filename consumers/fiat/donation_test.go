package fiat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// campaign inserts an active campaign with its wallet (the gateway's job)
// and returns the donation command template for it.
func campaign(t testing.TB, pool *pgxpool.Pool, goal int64, endsAt *time.Time) schemas.CharityDonate {
	t.Helper()
	id := schemas.NewID()
	wallet := schemas.CampaignWalletID(id)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO fiat_wallets (id, user_id, currency, kind) VALUES ($1, $2, 'KZT', 'campaign')`,
		wallet, "campaign:"+id); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO charity_campaigns (id, proposer_user_id, title, description, category,
		goal_kzt, ends_at, status, wallet_id, created_at) VALUES ($1, 'organizer', 't', 'd', 'water', $2, $3, 'active', $4, now())`,
		id, goal, endsAt, wallet); err != nil {
		t.Fatal(err)
	}
	return schemas.CharityDonate{CampaignID: id, CampaignWalletID: wallet, Category: "water", GoalKzt: goal,
		ProposerUserID: "organizer", EndsAt: endsAt, ThankYouURL: "http://x/thanks"}
}

func donateCmd(t testing.TB, tmpl schemas.CharityDonate, wallet, user string, amount int64, anonymous bool) pipeline.Command {
	t.Helper()
	d := tmpl
	d.DonationID, d.LedgerEntryID = schemas.NewID(), schemas.NewID()
	d.WalletID, d.DonorUserID, d.AmountKzt, d.Anonymous = wallet, user, amount, anonymous
	env, err := schemas.New(schemas.TypeCharityDonate, wallet, user, d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Command{Env: env, Topic: topics.FiatCommands}
}

func applyBatch(t *testing.T, pool *pgxpool.Pool, h *cfiat.Handler, cmds []pipeline.Command) []pipeline.Outcome {
	t.Helper()
	ctx := context.Background()
	var outs []pipeline.Outcome
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		outs, err = h.Apply(ctx, tx, cmds)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return outs
}

func scalar(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestApplyDonations applies donations mixed with rejections in one batch
// and checks the answers, the emissions, the money and the goal event.
func TestApplyDonations(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	camp := campaign(t, pool, 10_000, nil)
	past := time.Now().Add(-time.Hour)
	ended := campaign(t, pool, 10_000, &past)
	a := fund(t, pool, "ua", 10_000)
	b := fund(t, pool, "ub", 4_000)
	frozen := fund(t, pool, "uf", 5_000)
	if _, err := pool.Exec(ctx, `UPDATE fiat_wallets SET status = 'frozen' WHERE id = $1`, frozen); err != nil {
		t.Fatal(err)
	}
	rich := fund(t, pool, "ur", 20_000_000)
	usd := schemas.NewID()
	if _, err := pool.Exec(ctx, `INSERT INTO fiat_wallets (id, user_id, currency, balance) VALUES ($1, 'uu', 'USD', 5000)`, usd); err != nil {
		t.Fatal(err)
	}
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	cmds := []pipeline.Command{
		donateCmd(t, camp, a, "ua", 6_000, false),         // total 6000
		donateCmd(t, camp, b, "ub", 4_000, true),          // total 10000: reaches the goal
		donateCmd(t, camp, a, "ua", 4_001, false),         // a has 4000 left
		donateCmd(t, camp, b, "ua", 1, false),             // not the owner
		donateCmd(t, camp, frozen, "uf", 1, false),        // frozen
		donateCmd(t, camp, usd, "uu", 1, false),           // USD wallet
		donateCmd(t, ended, a, "ua", 1, false),            // ended campaign
		donateCmd(t, camp, a, "ua", 1_000, false),         // total 11000: past the goal, no second event
		donateCmd(t, camp, rich, "ur", 10_000_001, false), // over the pre-KYC per-transaction cap
	}
	outs := applyBatch(t, pool, h, cmds)
	want := []struct {
		status int
		code   string
		total  int64
		goal   bool
	}{
		{201, "", 6_000, false}, {201, "", 10_000, true}, {400, schemas.CodeInsufficientBalance, 0, false},
		{404, schemas.CodeWalletNotFound, 0, false}, {400, schemas.CodeWalletInactive, 0, false},
		{422, "validation_failed", 0, false}, {409, schemas.CodeCampaignNotActive, 0, false}, {201, "", 11_000, false},
		{403, schemas.CodeKYCRequired, 0, false},
	}
	for i, w := range want {
		var body struct {
			Error string `json:"error"`
			schemas.DonationResult
		}
		_ = json.Unmarshal(outs[i].Body, &body)
		if outs[i].Status != w.status || body.Error != w.code {
			t.Fatalf("command %d: %d %s, want %d %s", i, outs[i].Status, outs[i].Body, w.status, w.code)
		}
		if w.status != http.StatusCreated {
			if len(outs[i].Emit) != 0 {
				t.Fatalf("command %d: a rejection emits %d records", i, len(outs[i].Emit))
			}
			continue
		}
		var cmd schemas.CharityDonate
		_ = json.Unmarshal(cmds[i].Env.Data, &cmd)
		if body.CampaignTotalKzt != w.total || body.DonationID != cmd.DonationID || body.LedgerEntryID != cmd.LedgerEntryID ||
			body.TransactionID == "" || body.ThankYouURL != "http://x/thanks" {
			t.Fatalf("command %d: %s (want total %d)", i, outs[i].Body, w.total)
		}
		types := map[string]int{}
		for _, e := range outs[i].Emit {
			types[e.Env.Type]++
			switch e.Env.Type {
			case schemas.TypeLedgerAppend:
				var la schemas.LedgerAppend
				_ = json.Unmarshal(e.Env.Data, &la)
				if la.EntryID != cmd.LedgerEntryID || la.Kind != schemas.LedgerKindDonation || la.SourceID != cmd.DonationID ||
					(cmd.Anonymous && la.ActorUserID != schemas.AnonymousDonor) || (!cmd.Anonymous && la.ActorUserID != cmd.DonorUserID) {
					t.Fatalf("command %d ledger append: %s", i, e.Env.Data)
				}
			case schemas.TypeDonationReceived:
				var dr schemas.DonationReceived
				_ = json.Unmarshal(e.Env.Data, &dr)
				if e.Topic != topics.EventsCharity || e.Env.Key != cmd.CampaignID || dr.CampaignTotalKzt != w.total ||
					(cmd.Anonymous && dr.DonorUserID != "") || dr.OrganizerUserID != "organizer" ||
					e.Env.ActorUserID != cmd.DonorUserID { // the donor's reputation is derived from it
					t.Fatalf("command %d donation.received: %s %s", i, e.Env.Key, e.Env.Data)
				}
			}
		}
		wantTypes := map[string]int{schemas.TypeLedgerAppend: 1, schemas.TypeDonationReceived: 1}
		if w.goal {
			wantTypes[schemas.TypeCampaignGoalReached] = 1
		}
		if len(types) != len(wantTypes) {
			t.Fatalf("command %d emits %v, want %v", i, types, wantTypes)
		}
		for k, n := range wantTypes {
			if types[k] != n {
				t.Fatalf("command %d emits %v, want %v", i, types, wantTypes)
			}
		}
	}
	if got := balance(t, pool, a); got != 3_000 {
		t.Fatalf("a = %d, want 3000 (no fee)", got)
	}
	if got := balance(t, pool, b); got != 0 {
		t.Fatalf("b = %d", got)
	}
	if got := balance(t, pool, camp.CampaignWalletID); got != 11_000 {
		t.Fatalf("campaign wallet = %d", got)
	}
	if got := scalar(t, pool, `SELECT raised_kzt FROM charity_campaigns WHERE id = $1`, camp.CampaignID); got != 11_000 {
		t.Fatalf("raised = %d", got)
	}
	if got := scalar(t, pool, `SELECT count(*) FROM charity_campaigns WHERE id = $1 AND goal_reached_at IS NOT NULL`, camp.CampaignID); got != 1 {
		t.Fatal("goal_reached_at not set")
	}
	if got := scalar(t, pool, `SELECT month_out FROM fiat_limits WHERE user_id = 'ua'`); got != 7_000 {
		t.Fatalf("ua month_out = %d, want 7000 (donations count toward the month's outflow)", got)
	}
	if got := scalar(t, pool, `SELECT count(*) FROM charity_donations`); got != 3 {
		t.Fatalf("%d donation rows, want 3", got)
	}
	if got := scalar(t, pool, `SELECT count(*) FROM fiat_transactions WHERE kind = 'donation' AND fee = 0`); got != 3 {
		t.Fatalf("%d donation transactions, want 3", got)
	}

	// A later batch past the goal never fires it again.
	c := fund(t, pool, "uc", 1_000)
	outs = applyBatch(t, pool, h, []pipeline.Command{donateCmd(t, camp, c, "uc", 1_000, false)})
	if outs[0].Status != http.StatusCreated || len(outs[0].Emit) != 2 {
		t.Fatalf("later donation: %d %s, %d emissions", outs[0].Status, outs[0].Body, len(outs[0].Emit))
	}
}

// TestDonationCrashAfterCommit stops the fiat consumer after the batch that
// debited the donor committed and before its offsets: the ledger append
// was queued in the outbox in that transaction (nothing lost), and the
// restarted consumer answers the redelivered command with the stored reply
// (nothing applied twice).
func TestDonationCrashAfterCommit(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	camp := campaign(t, pool, 1_000, nil)
	w := fund(t, pool, "donor", 5_000)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	sendAcrossCrash(t, pool, h, donateCmd(t, camp, w, "donor", 1_200, false))
	if got := balance(t, pool, w); got != 3_800 {
		t.Fatalf("donor balance %d, want 3800 (debited once)", got)
	}
	if got := scalar(t, pool, `SELECT count(*) FROM charity_donations`); got != 1 {
		t.Fatalf("%d donations", got)
	}
	// The relay is not running: the emissions wait in the outbox, once.
	// (The ledger append travels in its batch's bundle.)
	if got := scalar(t, pool, `SELECT count(*) FROM outbox, jsonb_array_elements(convert_from(payload, 'UTF8')::jsonb -> 'data') AS e
		WHERE topic = $1 AND event_type = $2 AND e ->> 'type' = $3`, topics.LedgerAppend, schemas.TypeEventBundle, schemas.TypeLedgerAppend); got != 1 {
		t.Fatalf("%d ledger appends queued, want 1", got)
	}
	if got := scalar(t, pool, `SELECT count(*) FROM outbox WHERE event_type = $1`, schemas.TypeCampaignGoalReached); got != 1 {
		t.Fatalf("%d goal events queued, want 1", got)
	}
}
