package fiat_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// TestDepositMismatchNeedsReview: a paid deposit whose amount or currency
// does not match is received and kept in needs_review with what was paid
// (never answered with a 400 that would be stored as the event's answer);
// a later event for it is acknowledged, not credited; an admin can refund
// it but not credit the expected amount.
func TestDepositMismatchNeedsReview(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	w := fund(t, pool, "dm", 0)
	open := func(amount int64) string {
		id := schemas.NewID()
		outs := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositCreate, w, schemas.FiatDepositCreate{
			DepositID: id, SessionID: schemas.NewID(), URL: "https://pay.example/s", WalletID: w, UserID: "dm", Amount: amount})})
		if outs[0].Status != http.StatusCreated {
			t.Fatalf("open deposit: %d %s", outs[0].Status, outs[0].Body)
		}
		return id
	}
	credit := func(dep string, amount int64, cur string) pipeline.Command {
		return command(t, schemas.TypeFiatDepositCredit, w, schemas.FiatDepositCredit{DepositID: dep, WalletID: w,
			EventID: "evt_" + schemas.NewID(), Amount: amount, Currency: cur})
	}
	short, upper := open(1_000), open(2_000)
	outs := applyBatch(t, pool, h, []pipeline.Command{credit(short, 999, "KZT"), credit(upper, 2_000, "not-lower-case:KZT")})
	for i, o := range outs {
		var res schemas.FiatCreditResult
		_ = json.Unmarshal(o.Body, &res)
		if o.Status != http.StatusOK || res.Status != schemas.DepositNeedsReview || !res.Received {
			t.Fatalf("mismatch %d: %d %s, want 200 needs_review", i, o.Status, o.Body)
		}
		if len(o.Emit) != 1 || o.Emit[0].Topic != topics.EventsFiat || o.Emit[0].Env.Type != schemas.TypeDepositNeedsReview {
			t.Fatalf("mismatch %d emits %+v, want deposit.needs_review", i, o.Emit)
		}
	}
	if n := scalar(t, pool, `SELECT count(*) FROM fiat_deposits WHERE status = 'needs_review' AND paid_amount IS NOT NULL`); n != 2 {
		t.Fatalf("%d deposits in needs_review with the paid amount, want 2", n)
	}
	if n := scalar(t, pool, `SELECT paid_amount FROM fiat_deposits WHERE id = $1`, short); n != 999 {
		t.Fatalf("paid amount %d, want 999", n)
	}

	// The right event afterwards is acknowledged, not credited.
	outs = applyBatch(t, pool, h, []pipeline.Command{credit(short, 1_000, "KZT")})
	if outs[0].Status != http.StatusOK || balance(t, pool, w) != 0 {
		t.Fatalf("later event: %d %s, balance %d", outs[0].Status, outs[0].Body, balance(t, pool, w))
	}
	review := func(dep, action string) pipeline.Outcome {
		return applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositReview, w, schemas.FiatDepositReview{
			DepositID: dep, WalletID: w, Action: action, AdminUserID: "admin", Reason: "mismatch"})})[0]
	}
	if o := review(short, schemas.ReviewCredit); o.Status != http.StatusConflict || errCode(o) != schemas.CodeInvalidState {
		t.Fatalf("credit of a mismatched deposit: %d %s, want 409 invalid_state", o.Status, o.Body)
	}
	if o := review(short, schemas.ReviewRefund); o.Status != http.StatusOK {
		t.Fatalf("refund of a mismatched deposit: %d %s", o.Status, o.Body)
	}
	if balance(t, pool, w) != 0 || scalar(t, pool, `SELECT count(*) FROM fiat_transactions WHERE to_wallet = $1`, w) != 0 {
		t.Fatal("a mismatched deposit moved money")
	}
}
