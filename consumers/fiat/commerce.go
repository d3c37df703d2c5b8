package fiat

import (
	"fmt"
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// merchantCharge settles a charge of the customer wallet into the
// merchant's wallet; a charge with a payment reference settled before
// answers with that charge.
type merchantCharge struct{ schemas.FiatMerchantCharge }

func (m *merchantCharge) Lock(b *batch) {
	b.want.wallets.add(m.CustomerWalletID)
	b.want.wallets.add(m.MerchantWalletID)
	b.want.limits.add(m.CustomerUserID)
	b.want.auths.add(m.AuthorizationID)
	b.want.charges[store.ChargeKey{MerchantUserID: m.MerchantUserID, PaymentRef: m.PaymentRef}] = true
}

// merchantCharge settles a charge of the customer wallet into the
// merchant's wallet. It needs the customer's active authorization of the
// merchant on that wallet with enough remaining allowance; the customer's
// pre-KYC caps apply as to a transfer; the customer pays exactly the amount
// and the merchant receives it minus the 0.1 % fee.
func (m *merchantCharge) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	if c := b.charges[store.ChargeKey{MerchantUserID: m.MerchantUserID, PaymentRef: m.PaymentRef}]; c != nil {
		return pipeline.JSON(http.StatusOK, store.ChargeResultOf(*c, true)), nil
	}
	cust := b.wallets[m.CustomerWalletID]
	if cust == nil || cust.Kind != store.KindUser || cust.UserID != m.CustomerUserID {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil), nil
	}
	a := b.auths[m.AuthorizationID]
	if a == nil || a.Status != "active" || a.WalletID != cust.ID || a.MerchantUserID != m.MerchantUserID {
		return pipeline.Reject(http.StatusForbidden, schemas.CodeChargeNotAuthorized,
			"the wallet owner has not authorized this merchant to charge the wallet", nil), nil
	}
	merch := b.wallets[m.MerchantWalletID]
	if merch == nil || merch.UserID != m.MerchantUserID || merch.Currency != cust.Currency {
		// Not a passing state (wallets are never removed): answered as final,
		// never as a 503 that would be stored as the key's answer.
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "the merchant has no wallet in this currency", nil), nil
	}
	if cust.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the customer wallet is "+cust.Status, nil), nil
	}
	if merch.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the merchant wallet is "+merch.Status, nil), nil
	}
	if m.Amount > a.Remaining {
		return pipeline.Reject(http.StatusForbidden, schemas.CodeAuthorizationExceeds,
			"the charge exceeds what the wallet owner authorized", map[string]any{"remaining": a.Remaining}), nil
	}
	lim := b.limitsOf(cust.UserID)
	if !b.h.caps.CapCheck(lim.KYCApproved, m.Amount, lim.MonthOut, true) {
		return kycRejection(), nil
	}
	if cust.Balance < m.Amount {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance, "the customer balance does not cover the amount",
			map[string]any{"required": m.Amount}), nil
	}
	fee := schemas.ChargeFee(m.Amount)
	b.move(cust, -m.Amount)
	b.move(merch, m.Amount-fee)
	b.creditFee(cust.Currency, fee)
	a.Remaining -= m.Amount
	b.authDirty[a.ID] = true
	b.spend(lim, m.Amount)

	txID := b.newID("tx")
	c := store.Charge{ID: m.ChargeID, MerchantUserID: m.MerchantUserID, MerchantKeyID: m.MerchantKeyID,
		PaymentRef: m.PaymentRef, CustomerWallet: cust.ID, MerchantWallet: merch.ID, AuthorizationID: a.ID,
		Amount: m.Amount, Fee: fee, Currency: cust.Currency, Description: m.Description, TransactionID: txID, CreatedAt: b.now}
	b.newCharges = append(b.newCharges, c)
	b.charges[store.ChargeKey{MerchantUserID: m.MerchantUserID, PaymentRef: m.PaymentRef}] = &c
	memo := m.Description
	if memo == "" {
		memo = "merchant charge " + m.PaymentRef
	}
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "merchant_charge", Status: "completed", FromWallet: cust.ID,
		ToWallet: merch.ID, FromUser: cust.UserID, ToUser: merch.UserID, Amount: m.Amount, Fee: fee,
		Currency: cust.Currency, Memo: memo, RefID: c.ID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: m.MerchantUserID, Action: "merchant.charge",
		Subject: txID, Amount: m.Amount, Currency: cust.Currency,
		Detail: fmt.Sprintf("%s -> %s fee %d ref %s key %s", cust.ID, merch.ID, fee, m.PaymentRef, m.MerchantKeyID), CreatedAt: b.now})

	o := pipeline.JSON(http.StatusCreated, store.ChargeResultOf(c, false))
	b.emit(&o, topics.EventsFiat, schemas.TypeMerchantCharged, cust.ID, m.MerchantUserID, schemas.MerchantCharged{
		ChargeID: c.ID, TransactionID: txID, MerchantUserID: m.MerchantUserID, MerchantWalletID: merch.ID,
		CustomerWalletID: cust.ID, Amount: m.Amount, Fee: fee, Currency: cust.Currency, PaymentRef: m.PaymentRef,
		Description: m.Description})
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindMerchantCharge, SourceID: txID, ActorUserID: m.MerchantUserID,
		AmountCents: ptr(m.Amount), Currency: cust.Currency,
		Meta: map[string]any{"customerWallet": cust.ID, "merchantWallet": merch.ID, "fee": fee, "chargeId": c.ID}})
	return o, nil
}

// requestPay pays a payment request with the transfer rule: the payer pays
// the amount plus the 0.1 % fee, the requester receives the amount.
type requestPay struct{ schemas.FiatRequestPay }

func (p *requestPay) Lock(b *batch) {
	b.want.wallets.add(p.PayerWalletID)
	b.want.wallets.add(p.ReceiverWalletID)
	b.want.limits.add(p.PayerUserID)
	b.want.requests.add(p.RequestID)
}

func (p *requestPay) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	r := b.requests[p.RequestID]
	if r == nil {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeRequestNotFound, "no such payment request", nil), nil
	}
	payer, rej := b.ownWallet(p.PayerWalletID, p.PayerUserID)
	if rej != nil {
		return *rej, nil
	}
	switch r.Status {
	case schemas.RequestStatusPaid:
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeRequestPaid, "the payment request is already paid", nil), nil
	case schemas.RequestStatusExpired:
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeRequestExpired, "the payment request has expired", nil), nil
	}
	if reason := schemas.RequestExpiryReason(r.Views, r.MaxViews, r.ExpiresAt, b.now); reason != "" {
		o := pipeline.Reject(http.StatusBadRequest, schemas.CodeRequestExpired, "the payment request has expired", nil)
		b.expireRequest(&o, r, reason)
		return o, nil
	}
	if payer.ID == r.WalletID {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeCannotPayOwnRequest, "the payer wallet is the receiving wallet", nil), nil
	}
	to := b.wallets[r.WalletID]
	if to == nil {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "the receiving wallet does not exist", nil), nil
	}
	if payer.Currency != r.Currency {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeCurrencyMismatch,
			"the request is in "+r.Currency+"; pay it from a "+r.Currency+" wallet", nil), nil
	}
	if to.Status != store.StatusActive {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the receiving wallet is "+to.Status, nil), nil
	}
	fee := schemas.TransferFee(r.Amount)
	lim := b.limitsOf(payer.UserID)
	if !b.h.caps.CapCheck(lim.KYCApproved, r.Amount, lim.MonthOut, true) {
		return kycRejection(), nil
	}
	if payer.Balance < r.Amount+fee {
		return pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance,
			"the balance does not cover the amount plus the 0.1% fee",
			map[string]any{"required": r.Amount + fee, "feeKzt": fee, "balance": payer.Balance}), nil
	}
	b.move(payer, -(r.Amount + fee))
	b.move(to, r.Amount)
	b.creditFee(payer.Currency, fee)
	b.spend(lim, r.Amount)

	txID := b.newID("tx")
	at := b.now
	r.Status, r.PaidAt, r.PayerWallet, r.PayerUser, r.TransactionID = schemas.RequestStatusPaid, &at, payer.ID, payer.UserID, txID
	b.reqDirty[r.ID] = true
	memo := r.Description
	if memo == "" {
		memo = "payment request"
	}
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "request_payment", Status: "completed", FromWallet: payer.ID,
		ToWallet: to.ID, FromUser: payer.UserID, ToUser: to.UserID, Amount: r.Amount, Fee: fee, Currency: r.Currency,
		Memo: memo, RefID: r.ID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: payer.UserID, Action: "request.pay", Subject: txID,
		Amount: r.Amount, Currency: r.Currency, Detail: fmt.Sprintf("request %s %s -> %s fee %d", r.ID, payer.ID, to.ID, fee),
		CreatedAt: b.now})
	o := pipeline.JSON(http.StatusOK, schemas.FiatRequestPayResult{RequestID: r.ID, Token: r.Token, Status: schemas.RequestStatusPaid,
		TransactionID: txID, Amount: r.Amount, FeeKzt: fee, Currency: r.Currency, PayerWalletID: payer.ID,
		PayerBalance: payer.Balance, PaidAt: b.now})
	b.emit(&o, topics.EventsFiat, schemas.TypeRequestPaid, to.ID, to.UserID, schemas.RequestPaid{
		RequestID: r.ID, Token: r.Token, WalletID: to.ID, PayerWalletID: payer.ID, TransactionID: txID,
		Amount: r.Amount, Fee: fee, Currency: r.Currency, Description: r.Description})
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindRequestPayment, SourceID: txID, ActorUserID: payer.UserID,
		AmountCents: ptr(r.Amount), Currency: r.Currency,
		Meta: map[string]any{"fromWallet": payer.ID, "toWallet": to.ID, "fee": fee, "requestId": r.ID}})
	return o, nil
}

// expireRequest marks an open request expired in the batch and emits
// request.expired with the outcome.
func (b *batch) expireRequest(o *pipeline.Outcome, r *store.PaymentRequest, reason string) {
	at := b.now
	r.Status, r.ExpiredAt, r.ExpiredReason = schemas.RequestStatusExpired, &at, reason
	b.reqDirty[r.ID] = true
	b.emit(o, topics.EventsFiat, schemas.TypeRequestExpired, r.WalletID, r.UserID, store.RequestExpiredEvent(*r))
}
