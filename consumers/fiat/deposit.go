package fiat

import (
	"crypto/sha256"
	"fmt"
	"net/http"

	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// depositCreate opens a processor checkout session for a top-up of the
// user's own wallet, within the daily pre-KYC deposit cap.
type depositCreate struct{ schemas.FiatDepositCreate }

func (d *depositCreate) Lock(b *batch) {
	b.want.wallets.add(d.WalletID)
	b.want.limits.add(d.UserID)
	b.want.depositUsers.add(d.UserID)
}

func (d *depositCreate) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	w, rej := b.ownWallet(d.WalletID, d.UserID)
	if rej != nil {
		return *rej, nil
	}
	lim := b.limitsOf(d.UserID)
	if !b.h.caps.DepositAllowed(lim.KYCApproved, d.Amount, b.depToday[d.UserID]) {
		return pipeline.Reject(http.StatusForbidden, schemas.CodeKYCRequired,
			"this exceeds the daily deposit limit for accounts without KYC; submit KYC at /api/fiat/kyc/submit", nil), nil
	}
	b.depToday[d.UserID] += d.Amount
	b.newDeposits = append(b.newDeposits, store.Deposit{ID: d.DepositID, UserID: d.UserID, WalletID: w.ID,
		Amount: d.Amount, Currency: w.Currency, SessionID: d.SessionID, URL: d.URL, Status: "pending", CreatedAt: b.now})
	return pipeline.JSON(http.StatusCreated, schemas.FiatDepositResult{DepositID: d.DepositID, SessionID: d.SessionID, URL: d.URL,
		Status: "pending", WalletID: w.ID, Amount: d.Amount, Currency: w.Currency}), nil
}

// depositCredit credits a deposit the processor reported paid, exactly once
// per deposit. The money was received, so nothing about the payment is a
// reason to refuse it (and store the refusal as the event's answer): a
// payment that does not match the deposit, or a wallet that is not active,
// keeps the deposit in needs_review for a fiat admin.
type depositCredit struct{ schemas.FiatDepositCredit }

func (c *depositCredit) Lock(b *batch) {
	b.want.wallets.add(c.WalletID)
	b.want.deposits.add(c.DepositID)
	// The record of this event as a second payment, if one was made.
	if id := secondPaymentID(c.DepositID, c.EventID); id != "" {
		b.want.deposits.add(id)
	}
}

func (c *depositCredit) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	d, w, rej := b.depositOf(c.DepositID, c.WalletID)
	if rej != nil {
		return *rej, nil
	}
	if d.Status != "pending" {
		if c.EventID == d.EventID {
			// The event that settled the deposit, again.
			return pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, Idempotent: true, DepositID: d.ID,
				TransactionID: d.TransactionID, LedgerEntryID: d.LedgerEntryID, Status: d.Status}), nil
		}
		return b.secondPayment(c, d, w), nil
	}
	d.EventID = c.EventID
	if c.Amount != d.Amount || c.Currency != d.Currency {
		d.PaidAmount, d.PaidCurrency = c.Amount, c.Currency
		return b.holdDeposit(d, w, fmt.Sprintf("paid %d %s, expected %d %s", c.Amount, c.Currency, d.Amount, d.Currency)), nil
	}
	if w.Status != store.StatusActive {
		// A frozen wallet is a passing state: the admin credits the deposit
		// once the wallet is active, or refunds it.
		return b.holdDeposit(d, w, "wallet "+w.Status), nil
	}
	return b.creditDeposit(d, w, "processor"), nil
}

// secondPaymentID is the id of the record of a paid event for a deposit
// that was no longer pending: derived from the deposit and the event, so
// the event read again (even after its command id is forgotten) finds its
// record instead of making a second one. It is a ksuid of the deposit's
// time, as the admin routes require; "" when depositID is not a ksuid.
func secondPaymentID(depositID, eventID string) string {
	dep, err := ksuid.Parse(depositID)
	if err != nil || eventID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("second-payment\x00" + depositID + "\x00" + eventID))
	id, err := ksuid.FromParts(dep.Time(), sum[:16])
	if err != nil {
		return ""
	}
	return id.String()
}

// secondPayment records a paid event for deposit d, which is no longer
// pending, as a payment of its own: the processor charged again (or after
// the deposit was refunded). It is never credited and never acknowledged
// silently: it waits in needs_review with what was paid, listed for fiat
// admins, who can refund it once, and it is audited.
func (b *batch) secondPayment(c *depositCredit, d *store.Deposit, w *store.Wallet) pipeline.Outcome {
	id := secondPaymentID(d.ID, c.EventID)
	if id == "" {
		return pipeline.Unreadable("a paid event without an event id for deposit " + d.ID)
	}
	if x := b.deposits[id]; x != nil {
		return pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, Idempotent: true, DepositID: x.ID, Status: x.Status})
	}
	x := &store.Deposit{ID: id, UserID: d.UserID, WalletID: d.WalletID, Amount: d.Amount, Currency: d.Currency,
		SessionID: d.SessionID + "#" + c.EventID, URL: d.URL, Status: schemas.DepositNeedsReview, EventID: c.EventID,
		PaidAmount: c.Amount, PaidCurrency: c.Currency, PaymentOf: d.ID, CreatedAt: b.now}
	b.deposits[id] = x
	b.newDeposits = append(b.newDeposits, *x)
	reason := fmt.Sprintf("second payment: paid %d %s for deposit %s, which is %s (event %s)", c.Amount, c.Currency, d.ID, d.Status, d.EventID)
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit.second_payment"), Actor: "processor", Action: "deposit.second_payment",
		Subject: x.ID, Amount: c.Amount, Currency: c.Currency,
		Detail: "processor event " + c.EventID + ": " + reason, CreatedAt: b.now})
	o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: x.ID, Status: x.Status})
	b.emit(&o, topics.EventsFiat, schemas.TypeDepositNeedsReview, w.ID, w.UserID, schemas.DepositReviewEvent{
		DepositID: x.ID, WalletID: w.ID, EventID: c.EventID, Amount: c.Amount, Currency: c.Currency, Reason: reason})
	return o
}

// depositOf returns a locked deposit of the wallet with its wallet, or the
// 404 that answers a deposit or wallet that is not there.
func (b *batch) depositOf(id, walletID string) (*store.Deposit, *store.Wallet, *pipeline.Outcome) {
	d := b.deposits[id]
	if d == nil || d.WalletID != walletID {
		o := pipeline.Reject(http.StatusNotFound, schemas.CodeDepositNotFound, "no such deposit", nil)
		return nil, nil, &o
	}
	w := b.wallets[d.WalletID]
	if w == nil {
		o := pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil)
		return nil, nil, &o
	}
	return d, w, nil
}

// holdDeposit keeps a paid deposit that cannot be credited in needs_review,
// with the audit row and deposit.needs_review saying why.
func (b *batch) holdDeposit(d *store.Deposit, w *store.Wallet, reason string) pipeline.Outcome {
	d.Status = schemas.DepositNeedsReview
	b.doneDeps = append(b.doneDeps, d)
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit.needs_review"), Actor: "processor", Action: "deposit.needs_review",
		Subject: d.ID, Amount: d.Amount, Currency: d.Currency,
		Detail: "paid deposit " + d.ID + " event " + d.EventID + ": " + reason, CreatedAt: b.now})
	o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: d.ID, Status: d.Status})
	b.emit(&o, topics.EventsFiat, schemas.TypeDepositNeedsReview, w.ID, w.UserID, schemas.DepositReviewEvent{
		DepositID: d.ID, WalletID: w.ID, EventID: d.EventID, Amount: d.Amount, Currency: d.Currency, Reason: reason})
	return o
}

// creditDeposit credits a paid deposit to its active wallet, with the
// transaction, audit, event, ledger entry and reputation it causes.
func (b *batch) creditDeposit(d *store.Deposit, w *store.Wallet, actor string) pipeline.Outcome {
	b.move(w, d.Amount)
	txID, ledgerID := b.newID("tx"), b.newID("ledger")
	at := b.now
	d.Status, d.TransactionID, d.LedgerEntryID, d.CompletedAt = "completed", txID, ledgerID, &at
	b.doneDeps = append(b.doneDeps, d)
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "deposit", Status: "completed", ToWallet: w.ID, ToUser: w.UserID,
		Amount: d.Amount, Currency: w.Currency, Memo: "card top-up", RefID: d.ID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: actor, Action: "deposit", Subject: txID,
		Amount: d.Amount, Currency: w.Currency, Detail: "deposit " + d.ID + " event " + d.EventID, CreatedAt: b.now})
	o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: d.ID, TransactionID: txID,
		LedgerEntryID: ledgerID, Status: d.Status})
	b.emit(&o, topics.EventsFiat, schemas.TypeDepositCompleted, w.ID, w.UserID, schemas.DepositCompleted{
		DepositID: d.ID, WalletID: w.ID, TransactionID: txID, Amount: d.Amount, Currency: w.Currency})
	b.ledger(&o, schemas.LedgerAppend{EntryID: ledgerID, Kind: schemas.LedgerKindDeposit, SourceID: txID,
		ActorUserID: w.UserID, AmountCents: ptr(d.Amount), Currency: w.Currency,
		Meta: map[string]any{"wallet": w.ID, "depositId": d.ID, "eventId": d.EventID}})
	return o
}

// depositReview applies a fiat admin's decision on a deposit in
// needs_review: credit it to its (now active) wallet, or record its refund
// to the processor. A payment that did not match the deposit can only be
// refunded: crediting the deposit's amount would credit what was not paid.
type depositReview struct{ schemas.FiatDepositReview }

func (r *depositReview) Lock(b *batch) {
	b.want.wallets.add(r.WalletID)
	b.want.deposits.add(r.DepositID)
}

func (r *depositReview) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	d, w, rej := b.depositOf(r.DepositID, r.WalletID)
	if rej != nil {
		return *rej, nil
	}
	if d.Status != schemas.DepositNeedsReview {
		return pipeline.Reject(http.StatusConflict, schemas.CodeInvalidState, "the deposit is "+d.Status+", not needs_review", nil), nil
	}
	switch r.Action {
	case schemas.ReviewCredit:
		if d.PaymentOf != "" {
			return pipeline.Reject(http.StatusConflict, schemas.CodeInvalidState,
				fmt.Sprintf("a second payment (%d %s) of deposit %s; refund it", d.PaidAmount, d.PaidCurrency, d.PaymentOf), nil), nil
		}
		if d.PaidCurrency != "" {
			return pipeline.Reject(http.StatusConflict, schemas.CodeInvalidState,
				fmt.Sprintf("the processor reported %d %s paid for a deposit of %d %s; refund it", d.PaidAmount, d.PaidCurrency,
					d.Amount, d.Currency), nil), nil
		}
		if w.Status != store.StatusActive {
			return pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the wallet is "+w.Status+"; unfreeze it first", nil), nil
		}
		return b.creditDeposit(d, w, "admin:"+r.AdminUserID), nil
	case schemas.ReviewRefund:
		// What was paid goes back, not what the deposit expected.
		amount, currency := d.Refund()
		at := b.now
		d.Status, d.CompletedAt = schemas.DepositRefunded, &at
		b.doneDeps = append(b.doneDeps, d)
		b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit.review"), Actor: "admin:" + r.AdminUserID,
			Action: "deposit.refund", Subject: d.ID, Amount: amount, Currency: currency,
			Detail: "refunded to the processor: " + r.Reason, CreatedAt: b.now})
		o := pipeline.JSON(http.StatusOK, schemas.FiatCreditResult{Received: true, DepositID: d.ID, Status: d.Status})
		b.emit(&o, topics.EventsFiat, schemas.TypeDepositRefunded, w.ID, w.UserID, schemas.DepositReviewEvent{
			DepositID: d.ID, WalletID: w.ID, EventID: d.EventID, Amount: amount, Currency: currency, Reason: r.Reason})
		return o, nil
	}
	return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "unknown review action", nil), nil
}
