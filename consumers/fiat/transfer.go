package fiat

import (
	"fmt"
	"net/http"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// transfer moves money between two users' wallets of one currency, the
// 0.1 % fee paid by the sender. Its transaction row is its record (see
// Handler.RecordedSQL): a committed transfer writes no processed row.
type transfer struct{ schemas.FiatTransfer }

func (t *transfer) Lock(b *batch) {
	b.want.wallets.add(t.FromWalletID)
	b.want.wallets.add(t.ToWalletID)
	b.want.limits.add(t.FromUserID)
}

func (t *transfer) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	from, rej := b.ownWallet(t.FromWalletID, t.FromUserID)
	if rej != nil {
		return *rej, nil
	}
	failed := func(o pipeline.Outcome, reason string) pipeline.Outcome {
		b.emit(&o, topics.EventsFiat, schemas.TypeTransferFailed, from.ID, t.FromUserID, schemas.TransferFailed{
			FromWallet: from.ID, ToWallet: t.ToWalletID, AmountKzt: t.Amount, Reason: reason, Description: t.Memo,
			FromWalletID: from.ID, ToWalletID: t.ToWalletID, Memo: t.Memo, Currency: from.Currency,
		})
		return o
	}
	to := b.wallets[t.ToWalletID]
	if to == nil || to.Kind != store.KindUser || to.UserID != t.ToUserID {
		return failed(pipeline.Reject(http.StatusNotFound, schemas.CodeRecipientNotFound, "the recipient has no wallet", nil), schemas.CodeRecipientNotFound), nil
	}
	if to.ID == from.ID || to.UserID == from.UserID {
		return pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "some fields are missing or invalid",
			map[string]any{"fields": map[string]string{"toEmail": "must not be your own account"}}), nil
	}
	if to.Currency != from.Currency {
		return failed(pipeline.Reject(http.StatusUnprocessableEntity, schemas.CodeCurrencyMismatch, "the wallets hold different currencies", nil), schemas.CodeCurrencyMismatch), nil
	}
	if to.Status != store.StatusActive {
		return failed(pipeline.Reject(http.StatusBadRequest, schemas.CodeWalletInactive, "the recipient wallet is "+to.Status, nil), schemas.CodeWalletInactive), nil
	}
	fee := schemas.TransferFee(t.Amount)
	lim := b.limitsOf(t.FromUserID)
	if !b.h.caps.CapCheck(lim.KYCApproved, t.Amount, lim.MonthOut, true) {
		return failed(kycRejection(), schemas.CodeKYCRequired), nil
	}
	if from.Balance < t.Amount+fee {
		return failed(pipeline.Reject(http.StatusBadRequest, schemas.CodeInsufficientBalance,
			"the balance does not cover the amount plus the 0.1% fee",
			map[string]any{"required": t.Amount + fee, "feeKzt": fee, "balance": from.Balance}), schemas.CodeInsufficientBalance), nil
	}
	b.move(from, -(t.Amount + fee))
	b.move(to, t.Amount)
	b.creditFee(from.Currency, fee)
	b.spend(lim, t.Amount)

	txID := b.newID("tx")
	b.txs = append(b.txs, store.Tx{ID: txID, Kind: "transfer", Status: "completed", FromWallet: from.ID, ToWallet: to.ID,
		FromUser: from.UserID, ToUser: to.UserID, Amount: t.Amount, Fee: fee, Currency: from.Currency, Memo: t.Memo,
		RefID: env.ID, CreatedAt: b.now, RequestHash: env.RequestHash, FromBalance: from.Balance, ToBalance: to.Balance})
	b.audit = append(b.audit, store.AuditRow{ID: b.newID("audit"), Actor: from.UserID, Action: "transfer", Subject: txID,
		Amount: t.Amount, Currency: from.Currency, Detail: fmt.Sprintf("%s -> %s fee %d", from.ID, to.ID, fee), CreatedAt: b.now})

	o := transferReply(txID, from.Currency, fee, from.Balance, to.Balance, b.now) // rebuilt from the row for a replay
	b.emit(&o, topics.EventsFiat, schemas.TypeTransferCompleted, from.ID, from.UserID, schemas.TransferCompleted{
		TxID: txID, FromWallet: from.ID, ToWallet: to.ID, AmountKzt: t.Amount, FeeKzt: fee, Description: t.Memo,
		TransactionID: txID, FromWalletID: from.ID, ToWalletID: to.ID, Memo: t.Memo, Currency: from.Currency,
	})
	b.ledger(&o, schemas.LedgerAppend{Kind: schemas.LedgerKindTransfer, SourceID: txID, ActorUserID: from.UserID,
		AmountCents: ptr(t.Amount), Currency: from.Currency,
		Meta: map[string]any{"fromWallet": from.ID, "toWallet": to.ID, "fee": fee}})
	o.SelfRecorded = true // the transaction row is the record
	return o, nil
}

// transferReply is the 200 answer of a committed transfer.
func transferReply(txID, currency string, fee, fromBalance, toBalance int64, at time.Time) pipeline.Outcome {
	return pipeline.JSON(http.StatusOK, schemas.FiatTransferResult{TransactionID: txID, Currency: currency, FeeKzt: fee,
		FromBalanceKzt: fromBalance, ToBalanceKzt: toBalance, CreatedAt: at})
}
