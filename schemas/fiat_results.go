package schemas

import "time"

// Response bodies of the fiat module, built by the fiat applier and read
// back by the gateway (webhook replays, refund lists).

// RefundStatusSucceeded is the status of a settled refund.
const RefundStatusSucceeded = "succeeded"

// FiatTransferResult is the 200 body of a transfer.
type FiatTransferResult struct {
	TransactionID  string    `json:"transactionId"`
	FeeKzt         int64     `json:"feeKzt"`
	FromBalanceKzt int64     `json:"fromBalanceKzt"`
	ToBalanceKzt   int64     `json:"toBalanceKzt"`
	CreatedAt      time.Time `json:"createdAt"`
}

// FiatDepositResult is the 201 body of a new deposit session.
type FiatDepositResult struct {
	DepositID string `json:"depositId"`
	SessionID string `json:"sessionId"`
	URL       string `json:"url"`
	Status    string `json:"status"`
	WalletID  string `json:"walletId"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

// FiatCreditResult is the 200 body of a processed deposit webhook.
type FiatCreditResult struct {
	Received      bool   `json:"received"`
	Idempotent    bool   `json:"idempotent"`
	DepositID     string `json:"depositId"`
	TransactionID string `json:"transactionId"`
	LedgerEntryID string `json:"ledgerEntryId"`
	Status        string `json:"status"`
}

// FiatWithdrawResult is the 201 body of a withdrawal.
type FiatWithdrawResult struct {
	WithdrawalID  string    `json:"withdrawalId"`
	TransactionID string    `json:"transactionId"`
	Balance       int64     `json:"balance"`
	Status        string    `json:"status"`
	CreatedAt     time.Time `json:"createdAt"`
}

// FiatPayoutResult is the body of a payout request or decision.
type FiatPayoutResult struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	WalletID  string    `json:"walletId"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Balance   int64     `json:"balance"`
	CreatedAt time.Time `json:"createdAt"`
}

// FiatChargeResult is the body of a merchant charge: 201 when it settles, 200
// with Idempotent true when a replay of (merchant, paymentRef) returns it.
type FiatChargeResult struct {
	ID               string    `json:"id"`
	ChargeID         string    `json:"chargeId"`
	TransactionID    string    `json:"transactionId"`
	Status           string    `json:"status"`
	WalletID         string    `json:"walletId"`
	MerchantWalletID string    `json:"merchantWalletId"`
	Amount           int64     `json:"amount"`
	Fee              int64     `json:"fee"`
	NetAmount        int64     `json:"netAmount"`
	Currency         string    `json:"currency"`
	PaymentRef       string    `json:"paymentRef"`
	Description      string    `json:"description"`
	CreatedAt        time.Time `json:"createdAt"`
	Idempotent       bool      `json:"idempotent"`
}

// FiatRequestPayResult is the 200 body of a paid request.
type FiatRequestPayResult struct {
	RequestID     string    `json:"requestId"`
	Token         string    `json:"token"`
	Status        string    `json:"status"`
	TransactionID string    `json:"transactionId"`
	Amount        int64     `json:"amount"`
	FeeKzt        int64     `json:"feeKzt"`
	Currency      string    `json:"currency"`
	PayerWalletID string    `json:"payerWalletId"`
	PayerBalance  int64     `json:"payerBalance"`
	PaidAt        time.Time `json:"paidAt"`
}

// FiatRefundResult is the body of a refund: 201 when it settles, and the body
// of each item of the refund lists. RefundedTotal and Refundable (what of
// the charge or request remains refundable) are the snapshot right after
// the refund and appear only in its creation answer.
type FiatRefundResult struct {
	ID            string    `json:"id"`
	ChargeID      string    `json:"chargeId,omitempty"`
	RequestToken  string    `json:"requestToken,omitempty"`
	Amount        int64     `json:"amount"`
	Currency      string    `json:"currency"`
	Status        string    `json:"status"`
	Reason        string    `json:"reason"`
	TransactionID string    `json:"transactionId"`
	FromWalletID  string    `json:"fromWalletId"`
	WalletID      string    `json:"walletId"`
	RefundedTotal *int64    `json:"refundedTotal,omitempty"`
	Refundable    *int64    `json:"refundable,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
}
