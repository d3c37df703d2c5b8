package fiat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
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

// TestDepositRefundReturnsWhatWasPaid: a deposit of 1,000 KZT paid 1 tiyn
// is refunded 1 tiyn: the refund's event, audit row and the reconcile
// summary all carry what was paid, not what the deposit expected.
func TestDepositRefundReturnsWhatWasPaid(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	w := fund(t, pool, "rf", 0)
	dep := schemas.NewID()
	if o := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositCreate, w, schemas.FiatDepositCreate{
		DepositID: dep, SessionID: schemas.NewID(), URL: "https://pay.example/s", WalletID: w, UserID: "rf", Amount: 100_000})})[0]; o.Status != http.StatusCreated {
		t.Fatalf("open deposit: %d %s", o.Status, o.Body)
	}
	if o := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositCredit, w, schemas.FiatDepositCredit{
		DepositID: dep, WalletID: w, EventID: "evt_" + schemas.NewID(), Amount: 1, Currency: "KZT"})})[0]; o.Status != http.StatusOK {
		t.Fatalf("paid 1: %d %s", o.Status, o.Body)
	}
	o := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositReview, w, schemas.FiatDepositReview{
		DepositID: dep, WalletID: w, Action: schemas.ReviewRefund, AdminUserID: "admin", Reason: "mismatch"})})[0]
	if o.Status != http.StatusOK || len(o.Emit) != 1 || o.Emit[0].Env.Type != schemas.TypeDepositRefunded {
		t.Fatalf("refund: %d %s %+v", o.Status, o.Body, o.Emit)
	}
	ev, err := schemas.DataAs[schemas.DepositReviewEvent](o.Emit[0].Env)
	if err != nil || ev.Amount != 1 || ev.Currency != "KZT" {
		t.Fatalf("deposit.refunded %+v (%v), want amount 1 KZT", ev, err)
	}
	if n := scalar(t, pool, `SELECT amount FROM fiat_audit WHERE action = 'deposit.refund' AND subject = $1`, dep); n != 1 {
		t.Fatalf("refund audited with amount %d, want 1", n)
	}
	sum, err := store.NewStore(pool).DepositReviewSummary(context.Background())
	if err != nil || sum.Refunded != 1 || sum.RefundedAmount != 1 {
		t.Fatalf("review summary %+v (%v), want one refunded of 1", sum, err)
	}
}

// TestSecondPaymentNeedsReview: a paid event with a new event id for a
// deposit that was already credited is not acknowledged silently: it is
// recorded as a payment of its own in needs_review, with what was paid and
// the deposit it paid again, audited and announced; it cannot be credited,
// is refunded once with what was paid, and the same event read again (even
// under another command id) finds that record instead of making another.
func TestSecondPaymentNeedsReview(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	ctx := context.Background()
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	w := fund(t, pool, "sp", 0)
	dep := schemas.NewID()
	if o := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositCreate, w, schemas.FiatDepositCreate{
		DepositID: dep, SessionID: schemas.NewID(), URL: "https://pay.example/s", WalletID: w, UserID: "sp", Amount: 5_000})})[0]; o.Status != http.StatusCreated {
		t.Fatalf("open deposit: %d %s", o.Status, o.Body)
	}
	pay := func(evID string, amount int64) (pipeline.Outcome, schemas.FiatCreditResult) {
		o := applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositCredit, w, schemas.FiatDepositCredit{
			DepositID: dep, WalletID: w, EventID: evID, Amount: amount, Currency: "KZT"})})[0]
		var res schemas.FiatCreditResult
		_ = json.Unmarshal(o.Body, &res)
		return o, res
	}
	ev1, ev2 := "evt_"+schemas.NewID(), "evt_"+schemas.NewID()
	if _, res := pay(ev1, 5_000); res.Status != "completed" || balance(t, pool, w) != 5_000 {
		t.Fatalf("first payment: %+v, balance %d", res, balance(t, pool, w))
	}
	if _, res := pay(ev1, 5_000); !res.Idempotent || res.DepositID != dep {
		t.Fatalf("the settling event again: %+v", res)
	}
	o, res := pay(ev2, 4_000)
	second := res.DepositID
	if o.Status != http.StatusOK || res.Idempotent || res.Status != schemas.DepositNeedsReview || second == dep || second == "" {
		t.Fatalf("second payment: %d %s", o.Status, o.Body)
	}
	if len(o.Emit) != 1 || o.Emit[0].Env.Type != schemas.TypeDepositNeedsReview {
		t.Fatalf("second payment emits %+v, want deposit.needs_review", o.Emit)
	}
	if balance(t, pool, w) != 5_000 {
		t.Fatalf("a second payment was credited: balance %d", balance(t, pool, w))
	}
	if n := scalar(t, pool, `SELECT count(*) FROM fiat_audit WHERE action = 'deposit.second_payment' AND subject = $1 AND amount = 4000`, second); n != 1 {
		t.Fatalf("%d audit rows of the second payment, want 1", n)
	}
	if _, again := pay(ev2, 4_000); !again.Idempotent || again.DepositID != second {
		t.Fatalf("the second payment's event again: %+v", again)
	}
	st := store.NewStore(pool)
	queue, err := st.DepositsByStatus(ctx, schemas.DepositNeedsReview, schemas.Position{}, 10)
	if err != nil || len(queue) != 1 || queue[0].ID != second || queue[0].PaymentOf != dep || queue[0].PaidAmount != 4_000 || queue[0].PaidCurrency != "KZT" {
		t.Fatalf("review queue %+v (%v), want the second payment of 4000 KZT", queue, err)
	}
	review := func(action string) pipeline.Outcome {
		return applyBatch(t, pool, h, []pipeline.Command{command(t, schemas.TypeFiatDepositReview, w, schemas.FiatDepositReview{
			DepositID: second, WalletID: w, Action: action, AdminUserID: "admin", Reason: "double charge"})})[0]
	}
	if o := review(schemas.ReviewCredit); o.Status != http.StatusConflict || errCode(o) != schemas.CodeInvalidState {
		t.Fatalf("credit of a second payment: %d %s, want 409 invalid_state", o.Status, o.Body)
	}
	o = review(schemas.ReviewRefund)
	if o.Status != http.StatusOK || len(o.Emit) != 1 {
		t.Fatalf("refund of a second payment: %d %s", o.Status, o.Body)
	}
	if ev, _ := schemas.DataAs[schemas.DepositReviewEvent](o.Emit[0].Env); ev.Amount != 4_000 {
		t.Fatalf("deposit.refunded %+v, want amount 4000", ev)
	}
	if o := review(schemas.ReviewRefund); o.Status != http.StatusConflict {
		t.Fatalf("second refund: %d %s, want 409", o.Status, o.Body)
	}
	if balance(t, pool, w) != 5_000 {
		t.Fatalf("balance %d after the refund, want 5000", balance(t, pool, w))
	}
}
