package fiat

import (
	"context"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// refunds is the batch state of the refund commands: the locked charges and
// the refunded totals of the charges and requests, changed in memory as
// refunds apply and written back once at the end of the batch.
type refunds struct {
	rfCharges  map[string]*store.RefundableCharge
	rfRequests map[string]int64
	rfChDirty  map[string]bool
	rfReqDirty map[string]bool
	rfRows     []store.Refund
}

// refundLocks adds what a refund touches to the batch's lock sets: both
// wallets, and the request (locked with the commerce requests).
func refundLocks(r *schemas.FiatRefund, walletIDs, requestIDs set) {
	walletIDs.add(r.FromWalletID)
	walletIDs.add(r.CustomerWalletID)
	requestIDs.add(r.RequestID)
}

// loadRefunds locks the charges the batch's refunds name (after every other
// lock of the batch, in id order) and reads the refunded totals of their
// requests, whose rows loadCommerce has locked.
func (b *batch) loadRefunds(ctx context.Context, tx pgx.Tx, ds []decoded) error {
	chargeIDs, requestIDs := set{}, set{}
	for _, d := range ds {
		if d.refund != nil && d.bad == nil {
			chargeIDs.add(d.refund.ChargeID)
			requestIDs.add(d.refund.RequestID)
		}
	}
	b.refunds = refunds{rfChDirty: map[string]bool{}, rfReqDirty: map[string]bool{}}
	var err error
	if b.refunds.rfCharges, err = store.LockCharges(ctx, tx, chargeIDs.list()); err != nil {
		return err
	}
	b.refunds.rfRequests, err = store.RequestsRefunded(ctx, tx, requestIDs.list())
	return err
}

func (b *batch) flushRefunds(ctx context.Context, tx pgx.Tx) error {
	if len(b.refunds.rfRows) == 0 {
		return nil
	}
	ch := make(map[string]int64, len(b.refunds.rfChDirty))
	for id := range b.refunds.rfChDirty {
		ch[id] = b.refunds.rfCharges[id].Refunded
	}
	rq := make(map[string]int64, len(b.refunds.rfReqDirty))
	for id := range b.refunds.rfReqDirty {
		rq[id] = b.refunds.rfRequests[id]
	}
	if err := store.WriteRefunded(ctx, tx, ch, rq); err != nil {
		return err
	}
	return store.InsertRefunds(ctx, tx, b.refunds.rfRows)
}

// refund moves a refund from the payee's wallet back to the wallet that
// paid: a merchant charge back to the customer's wallet, a payment request
// back to the payer's. It is decided here, under the batch's lock of the
// charge or request row: beyond what remains refundable → 409
// refund_exceeds_charge whatever the balance; within it, a payee wallet that
// does not hold the amount → 400 insufficient_balance. No fee is taken and
// the original fee is not returned; no caps or reputation apply (the money
// returns to where it came from). Rejections record nothing.
func (b *batch) refund(r *schemas.FiatRefund) pipeline.Outcome {
	if err := r.Validate(); err != nil {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "the refund could not be read", nil)
	}
	var (
		paid, refunded      int64
		fromID, toID, label string
		token               string
		record              func(int64)
	)
	switch r.Source {
	case schemas.RefundSourceCharge:
		c := b.refunds.rfCharges[r.ChargeID]
		if c == nil || c.MerchantUserID != r.RefunderUserID {
			return pipeline.Reject(http.StatusNotFound, schemas.CodeChargeNotFound, "no such charge", nil)
		}
		paid, refunded, fromID, toID, label = c.Amount, c.Refunded, c.MerchantWallet, c.CustomerWallet, "charge "+c.ID
		record = func(v int64) { c.Refunded = v; b.refunds.rfChDirty[c.ID] = true }
	default:
		q := b.requests[r.RequestID]
		if q == nil || q.UserID != r.RefunderUserID {
			return pipeline.Reject(http.StatusNotFound, schemas.CodeRequestNotFound, "no such payment request", nil)
		}
		if q.Status != schemas.RequestStatusPaid {
			return pipeline.Reject(http.StatusConflict, schemas.CodeRequestNotPaid, "the payment request is "+q.Status+"; only a paid request can be refunded", nil)
		}
		paid, refunded, fromID, toID, label, token = q.Amount, b.refunds.rfRequests[q.ID], q.WalletID, q.PayerWallet, "request "+q.ID, q.Token
		record = func(v int64) { b.refunds.rfRequests[q.ID] = v; b.refunds.rfReqDirty[q.ID] = true }
	}
	remaining := paid - refunded
	amount := r.Amount
	if amount == 0 {
		amount = remaining
	}
	if amount <= 0 || amount > remaining {
		return pipeline.Reject(http.StatusConflict, schemas.CodeRefundExceedsCharge,
			"the refund exceeds what remains refundable", map[string]any{"refundable": remaining, "refunded": refunded})
	}
	from, to := b.wallets[fromID], b.wallets[toID]
	if from == nil || to == nil || fromID != r.FromWalletID || toID != r.CustomerWalletID || from.Currency != to.Currency {
		// The gateway names the wallets of the payment; a mismatch is a
		// forged command and a permanent one: a final 404, never a 503
		// that would be stored as the key's answer.
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "the wallets of the payment are not the ones named", nil)
	}
	if from.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "your wallet is "+from.Status, nil)
	}
	if to.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the paying wallet is "+to.Status, nil)
	}
	if from.Balance < amount {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance, "your wallet balance does not cover the refund",
			map[string]any{"required": amount, "balance": from.Balance})
	}
	b.move(from, -amount)
	b.move(to, amount)
	refunded += amount
	record(refunded)

	txID := schemas.NewID()
	memo := "refund of " + label
	if r.Reason != "" {
		memo += ": " + r.Reason
	}
	row := store.Refund{ID: r.RefundID, Source: r.Source, SourceID: r.ChargeID + r.RequestID, RequestToken: token,
		RefunderUserID: r.RefunderUserID, FromWallet: from.ID, ToWallet: to.ID, ToUser: to.UserID, Amount: amount,
		Currency: from.Currency, Reason: r.Reason, Status: schemas.RefundStatusSucceeded, TransactionID: txID, CreatedAt: b.now}
	b.refunds.rfRows = append(b.refunds.rfRows, row)
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "refund", Status: "completed", FromWallet: from.ID, ToWallet: to.ID,
		FromUser: from.UserID, ToUser: to.UserID, Amount: amount, Currency: from.Currency, Memo: memo, RefID: r.RefundID,
		CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: schemas.NewID(), Actor: r.RefunderUserID, Action: "refund", Subject: txID,
		Amount: amount, Currency: from.Currency,
		Detail:    fmt.Sprintf("refund %s of %s: %s -> %s, refunded %d of %d", r.RefundID, label, from.ID, to.ID, refunded, paid),
		CreatedAt: b.now})

	res := store.RefundResultOf(row)
	left := paid - refunded
	res.RefundedTotal, res.Refundable = &refunded, &left
	o := pipeline.JSON(http.StatusCreated, res)
	b.emit(&o, topics.EventsFiat, schemas.TypeRefundCreated, to.ID, r.RefunderUserID, schemas.RefundCreated{
		RefundID: r.RefundID, Source: r.Source, ChargeID: r.ChargeID, RequestID: r.RequestID, RequestToken: token,
		TransactionID: txID, MerchantUserID: from.UserID, MerchantWalletID: from.ID, CustomerUserID: to.UserID,
		CustomerWalletID: to.ID, Amount: amount, Currency: from.Currency, Reason: r.Reason, RefundedTotal: refunded,
		CreatedAt: b.now})
	meta := map[string]any{"fromWallet": from.ID, "toWallet": to.ID, "refundId": r.RefundID, "source": r.Source}
	if r.ChargeID != "" {
		meta["chargeId"] = r.ChargeID
	} else {
		meta["requestId"] = r.RequestID
	}
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindRefund, SourceID: txID, ActorUserID: r.RefunderUserID,
		AmountCents: ptr(amount), Currency: from.Currency, Meta: meta})
	return o
}
