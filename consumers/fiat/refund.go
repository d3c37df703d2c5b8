package fiat

import (
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// refund moves a refund from the payee's wallet back to the wallet that
// paid (see Decide).
type refund struct{ schemas.FiatRefund }

// refunds is the batch state of the refunds: the charges they name, locked
// after every shared row (the requests are locked with the shared commerce
// rows), and the refunded totals of the charges and requests, changed in
// memory as refunds apply and written back once.
type refunds struct {
	chargeIDs, requestIDs set
	charges               map[string]*store.RefundableCharge
	requests              map[string]int64
	chDirty, reqDirty     map[string]bool
	rows                  []store.Refund
}

func newRefunds() *refunds {
	return &refunds{chargeIDs: set{}, requestIDs: set{}, charges: map[string]*store.RefundableCharge{},
		requests: map[string]int64{}, chDirty: map[string]bool{}, reqDirty: map[string]bool{}}
}

func (p *refunds) QueueReads(q *pgx.Batch) {
	store.QueueLockCharges(q, p.chargeIDs.list(), p.charges)
	store.QueueRequestsRefunded(q, p.requestIDs.list(), p.requests)
}

func (p *refunds) QueueWrites(q *pgx.Batch, _ *batch) {
	ch := make(map[string]int64, len(p.chDirty))
	for id := range p.chDirty {
		ch[id] = p.charges[id].Refunded
	}
	rq := make(map[string]int64, len(p.reqDirty))
	for id := range p.reqDirty {
		rq[id] = p.requests[id]
	}
	store.QueueWriteRefunded(q, ch, rq)
	store.QueueInsertRefunds(q, p.rows)
}

func (r *refund) Lock(b *batch) {
	b.want.wallets.add(r.FromWalletID)
	b.want.wallets.add(r.CustomerWalletID)
	b.want.requests.add(r.RequestID)
	p := pipeline.PartOf[*refunds](&b.parts, schemas.TypeFiatRefund)
	p.chargeIDs.add(r.ChargeID)
	p.requestIDs.add(r.RequestID)
}

// refund moves a refund from the payee's wallet back to the wallet that
// paid: a merchant charge back to the customer's wallet, a payment request
// back to the payer's. It is decided here, under the batch's lock of the
// charge or request row: beyond what remains refundable → 409
// refund_exceeds_charge whatever the balance; within it, a payee wallet that
// does not hold the amount → 400 insufficient_balance. No fee is taken and
// the original fee is not returned; no caps or reputation apply (the money
// returns to where it came from). Rejections record nothing.
func (r *refund) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	p := pipeline.PartOf[*refunds](&b.parts, schemas.TypeFiatRefund)
	var (
		paid, refunded      int64
		fromID, toID, label string
		token               string
		record              func(int64)
	)
	switch r.Source {
	case schemas.RefundSourceCharge:
		c := p.charges[r.ChargeID]
		if c == nil || c.MerchantUserID != r.RefunderUserID {
			return pipeline.Reject(http.StatusNotFound, schemas.CodeChargeNotFound, "no such charge", nil), nil
		}
		paid, refunded, fromID, toID, label = c.Amount, c.Refunded, c.MerchantWallet, c.CustomerWallet, "charge "+c.ID
		record = func(v int64) { c.Refunded = v; p.chDirty[c.ID] = true }
	default:
		q := b.requests[r.RequestID]
		if q == nil || q.UserID != r.RefunderUserID {
			return pipeline.Reject(http.StatusNotFound, schemas.CodeRequestNotFound, "no such payment request", nil), nil
		}
		if q.Status != schemas.RequestStatusPaid {
			return pipeline.Reject(http.StatusConflict, schemas.CodeRequestNotPaid, "the payment request is "+q.Status+"; only a paid request can be refunded", nil), nil
		}
		paid, refunded, fromID, toID, label, token = q.Amount, p.requests[q.ID], q.WalletID, q.PayerWallet, "request "+q.ID, q.Token
		record = func(v int64) { p.requests[q.ID] = v; p.reqDirty[q.ID] = true }
	}
	remaining := paid - refunded
	amount := r.Amount
	if amount == 0 {
		amount = remaining
	}
	if amount <= 0 || amount > remaining {
		return pipeline.Reject(http.StatusConflict, schemas.CodeRefundExceedsCharge,
			"the refund exceeds what remains refundable", map[string]any{"refundable": remaining, "refunded": refunded}), nil
	}
	from, to := b.wallets[fromID], b.wallets[toID]
	if from == nil || to == nil || fromID != r.FromWalletID || toID != r.CustomerWalletID || from.Currency != to.Currency {
		// The gateway names the wallets of the payment; a mismatch is a
		// forged command and a permanent one: a final 404, never a 503
		// that would be stored as the key's answer.
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "the wallets of the payment are not the ones named", nil), nil
	}
	if from.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "your wallet is "+from.Status, nil), nil
	}
	if to.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the paying wallet is "+to.Status, nil), nil
	}
	if from.Balance < amount {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance, "your wallet balance does not cover the refund",
			map[string]any{"required": amount, "balance": from.Balance}), nil
	}
	b.move(from, -amount)
	b.move(to, amount)
	refunded += amount
	record(refunded)

	txID := b.newID("tx")
	memo := "refund of " + label
	if r.Reason != "" {
		memo += ": " + r.Reason
	}
	row := store.Refund{ID: r.RefundID, Source: r.Source, SourceID: r.ChargeID + r.RequestID, RequestToken: token,
		RefunderUserID: r.RefunderUserID, FromWallet: from.ID, ToWallet: to.ID, ToUser: to.UserID, Amount: amount,
		Currency: from.Currency, Reason: r.Reason, Status: schemas.RefundStatusSucceeded, TransactionID: txID, CreatedAt: b.now}
	p.rows = append(p.rows, row)
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "refund", Status: "completed", FromWallet: from.ID, ToWallet: to.ID,
		FromUser: from.UserID, ToUser: to.UserID, Amount: amount, Currency: from.Currency, Memo: memo, RefID: r.RefundID,
		CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: r.RefunderUserID, Action: "refund", Subject: txID,
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
	return o, nil
}
