package fiat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// refundFixture is a settled charge of 10,000 (fee 10) from cust to merch
// and a paid request of 2,000 (payer fee 2) from payer to recv.
type refundFixture struct {
	pool                       *pgxpool.Pool
	h                          *cfiat.Handler
	cust, merch, payer, recv   string
	chargeID, openReq, paidReq string
}

func newRefundFixture(t *testing.T) refundFixture {
	t.Helper()
	pool, _ := pgtest.NewDB(t)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	f := refundFixture{pool: pool, h: h, cust: fund(t, pool, "cust", 10_000), merch: fund(t, pool, "merch", 0),
		payer: fund(t, pool, "payer", 5_000), recv: fund(t, pool, "recv", 0), chargeID: schemas.NewID()}
	auth := authorize(t, pool, f.cust, "cust", "merch", 10_000)
	f.paidReq = request(t, pool, "recv", f.recv, 2_000, time.Now().Add(time.Hour))
	f.openReq = request(t, pool, "recv", f.recv, 500, time.Now().Add(time.Hour))
	outs := applyBatch(t, pool, h, []pipeline.Command{
		command(t, schemas.TypeFiatMerchantCharge, f.cust, schemas.FiatMerchantCharge{ChargeID: f.chargeID,
			MerchantUserID: "merch", MerchantKeyID: "k1", MerchantWalletID: f.merch, CustomerWalletID: f.cust,
			CustomerUserID: "cust", AuthorizationID: auth, Amount: 10_000, PaymentRef: "o-1"}),
		command(t, schemas.TypeFiatRequestPay, f.payer, schemas.FiatRequestPay{RequestID: f.paidReq,
			PayerWalletID: f.payer, PayerUserID: "payer", ReceiverWalletID: f.recv}),
	})
	if outs[0].Status != http.StatusCreated || outs[1].Status != http.StatusOK {
		t.Fatalf("setup: %d %s / %d %s", outs[0].Status, outs[0].Body, outs[1].Status, outs[1].Body)
	}
	return f
}

func (f refundFixture) chargeRefund(t testing.TB, refunder string, amount int64) pipeline.Command {
	return command(t, schemas.TypeFiatRefund, f.cust, schemas.FiatRefund{RefundID: schemas.NewID(),
		Source: schemas.RefundSourceCharge, ChargeID: f.chargeID, RefunderUserID: refunder, FromWalletID: f.merch,
		CustomerWalletID: f.cust, Amount: amount, Reason: "damaged"})
}

func (f refundFixture) requestRefund(t testing.TB, req, refunder string, amount int64) pipeline.Command {
	return command(t, schemas.TypeFiatRefund, f.payer, schemas.FiatRefund{RefundID: schemas.NewID(),
		Source: schemas.RefundSourceRequest, RequestID: req, RefunderUserID: refunder, FromWalletID: f.recv,
		CustomerWalletID: f.payer, Amount: amount})
}

func errCode(o pipeline.Outcome) string {
	var body struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(o.Body, &body)
	return body.Error
}

// TestApplyRefunds applies partial, full, foreign, excessive and uncovered
// refunds of a charge and a request in batches and checks the answers, the
// money (no fee either way), the refunded totals and the emissions.
func TestApplyRefunds(t *testing.T) {
	f := newRefundFixture(t)
	// merch holds 9,990 (10,000 minus the 10 fee it never received); recv
	// holds 2,000.
	outs := applyBatch(t, f.pool, f.h, []pipeline.Command{
		f.chargeRefund(t, "merch", 3_000),            // 0: partial; merch 6,990
		f.chargeRefund(t, "someone", 1),              // 1: another merchant's charge
		f.chargeRefund(t, "merch", 7_001),            // 2: 7,000 remain
		f.chargeRefund(t, "merch", 2_500),            // 3: second partial; merch 4,490
		f.chargeRefund(t, "merch", 0),                // 4: the rest, 4,500: merch holds 4,490
		f.chargeRefund(t, "merch", 4_490),            // 5: merch 0; 10 remain
		f.chargeRefund(t, "merch", 11),               // 6: beyond what remains, whatever the balance
		f.requestRefund(t, f.openReq, "recv", 0),     // 7: not paid
		f.requestRefund(t, f.paidReq, "payer", 0),    // 8: not the requester
		f.requestRefund(t, f.paidReq, "recv", 2_000), // 9: all of it
		f.requestRefund(t, f.paidReq, "recv", 0),     // 10: nothing remains
		f.requestRefund(t, "unknown", "recv", 5),     // 11: unknown request
	})
	want := []struct {
		status int
		code   string
	}{
		{201, ""}, {404, schemas.CodeChargeNotFound}, {409, schemas.CodeRefundExceedsCharge}, {201, ""},
		{400, schemas.CodeInsufficientBalance}, {201, ""}, {409, schemas.CodeRefundExceedsCharge},
		{409, schemas.CodeRequestNotPaid}, {404, schemas.CodeRequestNotFound}, {201, ""},
		{409, schemas.CodeRefundExceedsCharge}, {404, schemas.CodeRequestNotFound},
	}
	for i, w := range want {
		if outs[i].Status != w.status || errCode(outs[i]) != w.code {
			t.Errorf("command %d: %d %s, want %d %s", i, outs[i].Status, outs[i].Body, w.status, w.code)
		}
	}
	for i, o := range outs {
		if o.Status != http.StatusCreated && len(o.Emit) != 0 {
			t.Errorf("rejected command %d emits %d records", i, len(o.Emit))
		}
	}
	if len(outs[0].Emit) != 2 || outs[0].Emit[0].Env.Type != schemas.TypeRefundCreated ||
		outs[0].Emit[0].Topic != topics.EventsFiat || outs[0].Emit[0].Env.Key != f.cust ||
		outs[0].Emit[1].Env.Type != schemas.TypeLedgerAppend {
		t.Fatalf("emissions of a refund: %+v", outs[0].Emit)
	}
	entry, err := schemas.DataAs[schemas.LedgerAppend](outs[0].Emit[1].Env)
	if err != nil || entry.Kind != schemas.LedgerKindRefund || *entry.AmountCents != 3_000 || entry.ActorUserID != "merch" {
		t.Fatalf("ledger entry %+v %v", entry, err)
	}

	// The merchant tops up the 10 it lacks; the rest settles the charge.
	if _, err := f.pool.Exec(context.Background(), `UPDATE fiat_wallets SET balance = 10 WHERE id = $1`, f.merch); err != nil {
		t.Fatal(err)
	}
	outs = applyBatch(t, f.pool, f.h, []pipeline.Command{f.chargeRefund(t, "merch", 0), f.chargeRefund(t, "merch", 0)})
	var last schemas.FiatRefundResult
	if err := json.Unmarshal(outs[0].Body, &last); err != nil || outs[0].Status != 201 || last.Amount != 10 ||
		last.ChargeID != f.chargeID || *last.RefundedTotal != 10_000 || *last.Refundable != 0 ||
		last.Status != "succeeded" || last.WalletID != f.cust || last.FromWalletID != f.merch {
		t.Fatalf("refund of the rest: %s %v", outs[0].Body, err)
	}
	if outs[1].Status != http.StatusConflict || errCode(outs[1]) != schemas.CodeRefundExceedsCharge {
		t.Fatalf("refund of a fully refunded charge: %d %s", outs[1].Status, outs[1].Body)
	}
	// The customer and the payer have their payments back; the fees of the
	// original payments stay in the fee wallet; no refund took a fee.
	for id, want := range map[string]int64{f.cust: 10_000, f.merch: 0, f.payer: 5_000 - 2, f.recv: 0, "fee-KZT": 10 + 2} {
		if got := balance(t, f.pool, id); got != want {
			t.Errorf("balance of %s = %d, want %d", id, got, want)
		}
	}
	if got := scalar(t, f.pool, `SELECT refunded FROM fiat_merchant_charges WHERE id = $1`, f.chargeID); got != 10_000 {
		t.Errorf("charge refunded %d", got)
	}
	if got := scalar(t, f.pool, `SELECT refunded FROM fiat_payment_requests WHERE id = $1`, f.paidReq); got != 2_000 {
		t.Errorf("request refunded %d", got)
	}
	if got := scalar(t, f.pool, `SELECT count(*) FROM fiat_refunds`); got != 5 {
		t.Errorf("%d refund rows, want 5", got)
	}
	if got := scalar(t, f.pool, `SELECT count(*) FROM fiat_transactions WHERE kind = 'refund' AND fee = 0`); got != 5 {
		t.Errorf("%d refund transactions without fee, want 5", got)
	}
	if got := scalar(t, f.pool, `SELECT count(*) FROM fiat_audit WHERE action = 'refund'`); got != 5 {
		t.Errorf("%d refund audit rows, want 5", got)
	}
}

// TestConcurrentRefunds applies 50 refunds of one charge, each in its own
// batch and transaction, all at once: the charge row lock serialises them,
// so exactly the refunds that fit succeed and the total never exceeds the
// charge.
func TestConcurrentRefunds(t *testing.T) {
	f := newRefundFixture(t)
	const n, each = 50, 700 // 14 refunds of 700 fit the 10,000 charged
	// The merchant holds plenty, so only what remains of the charge limits.
	if _, err := f.pool.Exec(context.Background(), `UPDATE fiat_wallets SET balance = 1000000 WHERE id = $1`, f.merch); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	statuses := make([]int, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			tx, err := f.pool.Begin(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = tx.Rollback(ctx) }()
			outs, err := f.h.Apply(ctx, tx, []pipeline.Command{f.chargeRefund(t, "merch", each)})
			if err != nil {
				errs[i] = err
				return
			}
			statuses[i] = outs[0].Status
			errs[i] = tx.Commit(ctx)
		}()
	}
	wg.Wait()
	ok := 0
	for i := range statuses {
		if errs[i] != nil {
			t.Fatalf("refund %d: %v", i, errs[i])
		}
		if statuses[i] == http.StatusCreated {
			ok++
		}
	}
	if ok != 14 {
		t.Fatalf("%d refunds succeeded, want 14", ok)
	}
	if got := scalar(t, f.pool, `SELECT refunded FROM fiat_merchant_charges WHERE id = $1`, f.chargeID); got != 14*each {
		t.Fatalf("refunded %d, want %d", got, 14*each)
	}
	if got := scalar(t, f.pool, `SELECT coalesce(sum(amount), 0) FROM fiat_refunds`); got != 14*each {
		t.Fatalf("refund rows sum to %d", got)
	}
	if c, m := balance(t, f.pool, f.cust), balance(t, f.pool, f.merch); c != 14*each || m != 1_000_000-14*each {
		t.Fatalf("customer %d, merchant %d", c, m)
	}
}

// TestRefundCrashAfterCommit: the runner commits a refund and dies before
// replying and committing its offset; the next runner finds the processed
// command and answers it without moving the money again.
func TestRefundCrashAfterCommit(t *testing.T) {
	f := newRefundFixture(t)
	sendAcrossCrash(t, f.pool, f.h, f.chargeRefund(t, "merch", 4_000))
	if c, m := balance(t, f.pool, f.cust), balance(t, f.pool, f.merch); c != 4_000 || m != 5_990 {
		t.Fatalf("customer %d, merchant %d: the refund must apply once", c, m)
	}
	if got := scalar(t, f.pool, `SELECT count(*) FROM fiat_refunds`); got != 1 {
		t.Fatalf("%d refund rows", got)
	}
	if got := scalar(t, f.pool, `SELECT count(*) FROM outbox WHERE event_type = $1`, schemas.TypeRefundCreated); got != 1 {
		t.Fatalf("%d refund.created queued, want 1", got)
	}
}
