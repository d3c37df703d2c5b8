package schemas

import "time"

// Response bodies of the fiat module, built by the fiat applier and read
// back by the gateway (webhook replays, refund lists). The tags describe
// them in the OpenAPI document.

// RefundStatusSucceeded is the status of a settled refund.
const RefundStatusSucceeded = "succeeded"

// FiatTransferResult is the 200 body of a transfer.
type FiatTransferResult struct {
	TransactionID  string    `json:"transactionId" required:"true" format:"ksuid"`
	FeeKzt         int64     `json:"feeKzt" required:"true" description:"integer minor units"`
	FromBalanceKzt int64     `json:"fromBalanceKzt" required:"true" description:"integer minor units"`
	ToBalanceKzt   int64     `json:"toBalanceKzt" required:"true" description:"integer minor units"`
	CreatedAt      time.Time `json:"createdAt" required:"true"`
	// Currency is the wallets' currency: the *Kzt names are the spec's and
	// hold minor units of it (a USD transfer answers cents).
	Currency string `json:"currency" required:"true" description:"ISO 4217 code of the amounts (the *Kzt fields hold minor units of it)"`
}

// FiatDepositResult is the 201 body of a new deposit session.
type FiatDepositResult struct {
	DepositID string `json:"depositId" required:"true" format:"ksuid"`
	SessionID string `json:"sessionId" required:"true"`
	URL       string `json:"url" required:"true" description:"the processor's checkout page: send the payer there"`
	Status    string `json:"status" required:"true" enum:"pending"`
	WalletID  string `json:"walletId" required:"true" format:"ksuid"`
	Amount    int64  `json:"amount" required:"true" description:"integer minor units"`
	Currency  string `json:"currency" required:"true"`
}

// FiatCreditResult is the 200 body of a processed deposit webhook (and of
// an admin's review of a deposit). TransactionID and LedgerEntryID are
// empty when nothing was credited (needs_review, refunded).
type FiatCreditResult struct {
	Received      bool   `json:"received" required:"true"`
	Idempotent    bool   `json:"idempotent" required:"true"`
	DepositID     string `json:"depositId" required:"true" format:"ksuid"`
	TransactionID string `json:"transactionId" required:"true"`
	LedgerEntryID string `json:"ledgerEntryId" required:"true"`
	Status        string `json:"status" required:"true" enum:"completed,needs_review,refunded"`
}

// FiatWithdrawResult is the 201 body of a withdrawal.
type FiatWithdrawResult struct {
	WithdrawalID  string    `json:"withdrawalId" required:"true" format:"ksuid"`
	TransactionID string    `json:"transactionId" required:"true" format:"ksuid"`
	Balance       int64     `json:"balance" required:"true" description:"integer minor units"`
	Currency      string    `json:"currency" required:"true"`
	Status        string    `json:"status" required:"true" enum:"completed"`
	CreatedAt     time.Time `json:"createdAt" required:"true"`
}

// FiatPayoutResult is the body of a payout request or decision.
type FiatPayoutResult struct {
	ID        string    `json:"id" required:"true" format:"ksuid"`
	Status    string    `json:"status" required:"true" enum:"pending_review,paid,rejected"`
	WalletID  string    `json:"walletId" required:"true" format:"ksuid"`
	Amount    int64     `json:"amount" required:"true" description:"integer minor units"`
	Currency  string    `json:"currency" required:"true"`
	Balance   int64     `json:"balance" required:"true" description:"integer minor units"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// FiatChargeResult is the body of a merchant charge: 201 when it settles, 200
// with Idempotent true when a replay of (merchant, paymentRef) returns it.
type FiatChargeResult struct {
	ID               string    `json:"id" required:"true" format:"ksuid"`
	ChargeID         string    `json:"chargeId" required:"true" format:"ksuid"`
	TransactionID    string    `json:"transactionId" required:"true" format:"ksuid"`
	Status           string    `json:"status" required:"true" enum:"succeeded"`
	WalletID         string    `json:"walletId" required:"true" format:"ksuid"`
	MerchantWalletID string    `json:"merchantWalletId" required:"true" format:"ksuid"`
	Amount           int64     `json:"amount" required:"true" description:"integer minor units"`
	Fee              int64     `json:"fee" required:"true" description:"integer minor units"`
	NetAmount        int64     `json:"netAmount" required:"true" description:"integer minor units"`
	Currency         string    `json:"currency" required:"true"`
	PaymentRef       string    `json:"paymentRef" required:"true"`
	Description      string    `json:"description" required:"true"`
	CreatedAt        time.Time `json:"createdAt" required:"true"`
	Idempotent       bool      `json:"idempotent" required:"true"`
}

// FiatRequestPayResult is the 200 body of a paid request.
type FiatRequestPayResult struct {
	RequestID     string    `json:"requestId" required:"true" format:"ksuid"`
	Token         string    `json:"token" required:"true"`
	Status        string    `json:"status" required:"true" enum:"paid"`
	TransactionID string    `json:"transactionId" required:"true" format:"ksuid"`
	Amount        int64     `json:"amount" required:"true" description:"integer minor units"`
	FeeKzt        int64     `json:"feeKzt" required:"true" description:"integer minor units"`
	Currency      string    `json:"currency" required:"true"`
	PayerWalletID string    `json:"payerWalletId" required:"true" format:"ksuid"`
	PayerBalance  int64     `json:"payerBalance" required:"true" description:"integer minor units"`
	PaidAt        time.Time `json:"paidAt" required:"true"`
}

// FiatRefundResult is the body of a refund: 201 when it settles, and the body
// of each item of the refund lists. RefundedTotal and Refundable (what of
// the charge or request remains refundable) are the snapshot right after
// the refund and appear only in its creation answer.
type FiatRefundResult struct {
	ID            string    `json:"id" required:"true" format:"ksuid"`
	ChargeID      string    `json:"chargeId,omitempty" format:"ksuid"`
	RequestToken  string    `json:"requestToken,omitempty"`
	Amount        int64     `json:"amount" required:"true" description:"integer minor units"`
	Currency      string    `json:"currency" required:"true"`
	Status        string    `json:"status" required:"true" enum:"succeeded"`
	Reason        string    `json:"reason" required:"true"`
	TransactionID string    `json:"transactionId" required:"true" format:"ksuid"`
	FromWalletID  string    `json:"fromWalletId" required:"true" format:"ksuid"`
	WalletID      string    `json:"walletId" required:"true" format:"ksuid"`
	RefundedTotal *int64    `json:"refundedTotal,omitempty" description:"integer minor units, right after this refund"`
	Refundable    *int64    `json:"refundable,omitempty" description:"integer minor units, right after this refund"`
	CreatedAt     time.Time `json:"createdAt" required:"true"`
}
