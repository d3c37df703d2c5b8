package fiat

import (
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// withdraw debits the user's own wallet for an off-platform payment.
type withdraw struct{ schemas.FiatWithdraw }

func (wd *withdraw) Lock(b *batch) {
	b.want.wallets.add(wd.WalletID)
	b.want.limits.add(wd.UserID)
}

func (wd *withdraw) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	w, rej := b.debitOwn(wd.WalletID, wd.UserID, wd.Amount)
	if rej != nil {
		return *rej, nil
	}
	txID, wdID := b.newID("tx"), wd.WithdrawalID
	if wdID == "" {
		wdID = b.newID("withdrawal")
	}
	// The destination is sealed by the gateway: memo and audit show its hint
	// (a command from before that carries it in clear: hinted here).
	hint := wd.DestinationHint
	if hint == "" {
		hint = schemas.AccountHint(wd.Destination)
	}
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "withdrawal", Status: "completed", FromWallet: w.ID, FromUser: w.UserID,
		Amount: wd.Amount, Currency: w.Currency, Memo: hint, RefID: wdID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: w.UserID, Action: "withdrawal", Subject: txID,
		Amount: wd.Amount, Currency: w.Currency, Detail: "to " + hint, CreatedAt: b.now})
	o := pipeline.JSON(http.StatusCreated, schemas.FiatWithdrawResult{WithdrawalID: wdID, TransactionID: txID, Balance: w.Balance, Currency: w.Currency,
		Status: "completed", CreatedAt: b.now})
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindWithdrawal, SourceID: txID, ActorUserID: w.UserID,
		AmountCents: ptr(wd.Amount), Currency: w.Currency, Meta: map[string]any{"wallet": w.ID, "withdrawalId": wdID}})
	b.emit(&o, topics.EventsFiat, schemas.TypeWithdrawalCompleted, w.ID, w.UserID, schemas.WithdrawalCompleted{
		WithdrawalID: wdID, WalletID: w.ID, TransactionID: txID, Amount: wd.Amount, Currency: w.Currency, DestinationHint: hint})
	return o, nil
}

// payoutRequest holds the funds of a bank payout awaiting an admin's review.
type payoutRequest struct{ schemas.FiatPayoutRequest }

func (p *payoutRequest) Lock(b *batch) {
	b.want.wallets.add(p.WalletID)
	b.want.limits.add(p.UserID)
}

func (p *payoutRequest) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	w, rej := b.debitOwn(p.WalletID, p.UserID, p.Amount)
	if rej != nil {
		return *rej, nil
	}
	txID := b.newID("tx")
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "payout_hold", Status: "completed", FromWallet: w.ID, FromUser: w.UserID,
		Amount: p.Amount, Currency: w.Currency, Memo: "payout to " + p.BankAccountHint, RefID: p.PayoutID, CreatedAt: b.now})
	b.newPayouts = append(b.newPayouts, store.Payout{ID: p.PayoutID, UserID: p.UserID, WalletID: w.ID, Amount: p.Amount,
		Currency: w.Currency, BankAccount: p.BankAccount, Status: "pending_review", TransactionID: txID, CreatedAt: b.now})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: w.UserID, Action: "payout.hold", Subject: p.PayoutID,
		Amount: p.Amount, Currency: w.Currency, Detail: "bank account " + p.BankAccountHint, CreatedAt: b.now})
	return pipeline.JSON(http.StatusCreated, schemas.FiatPayoutResult{ID: p.PayoutID, Status: "pending_review", WalletID: w.ID,
		Amount: p.Amount, Currency: w.Currency, Balance: w.Balance, CreatedAt: b.now}), nil
}

// payoutDecide approves (paid) or rejects (held funds released) a payout.
type payoutDecide struct{ schemas.FiatPayoutDecide }

func (d *payoutDecide) Lock(b *batch) {
	b.want.wallets.add(d.WalletID)
	b.want.payouts.add(d.PayoutID)
}

func (d *payoutDecide) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	p := b.payouts[d.PayoutID]
	if p == nil || p.WalletID != d.WalletID {
		return pipeline.Reject(http.StatusNotFound, schemas.CodePayoutNotFound, "no such payout", nil), nil
	}
	if p.Status != "pending_review" {
		return pipeline.Reject(http.StatusConflict, schemas.CodeInvalidState, "the payout is "+p.Status, nil), nil
	}
	w := b.wallets[p.WalletID]
	if w == nil {
		return pipeline.Reject(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet", nil), nil
	}
	at := b.now
	p.DecidedAt = &at
	action := "payout.paid"
	if d.Approve {
		p.Status = "paid"
	} else {
		// The held funds go back, also to a frozen wallet: they were its own.
		p.Status = "rejected"
		action = "payout.rejected"
		b.move(w, p.Amount)
		b.txs = append(b.txs, store.Tx{ID: b.newID("tx"), Kind: "payout_release", Status: "completed", ToWallet: w.ID,
			ToUser: w.UserID, Amount: p.Amount, Currency: w.Currency, Memo: "payout rejected", RefID: p.ID, CreatedAt: b.now})
	}
	b.decided = append(b.decided, p)
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: d.AdminID, Action: action, Subject: p.ID,
		Amount: p.Amount, Currency: p.Currency, Detail: "wallet " + w.ID, CreatedAt: b.now})
	return pipeline.JSON(http.StatusOK, schemas.FiatPayoutResult{ID: p.ID, Status: p.Status, WalletID: w.ID, Amount: p.Amount,
		Currency: p.Currency, Balance: w.Balance, CreatedAt: p.CreatedAt}), nil
}
