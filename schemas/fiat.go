package schemas

import (
	"errors"
	"time"
)

// Fiat command types, sent on fiat.commands keyed by the wallet whose balance
// the command debits (or, for a credit-only command, credits).
const (
	// TypeFiatTransfer moves money between two wallets of one currency, with
	// the platform fee paid by the sender.
	TypeFiatTransfer = "fiat.transfer"
	// TypeFiatDepositCreate opens a processor checkout session for a top-up.
	TypeFiatDepositCreate = "fiat.deposit.create"
	// TypeFiatDepositCredit credits a deposit the processor reported paid.
	TypeFiatDepositCredit = "fiat.deposit.credit"
	// TypeFiatWithdraw debits a wallet for an off-platform payout.
	TypeFiatWithdraw = "fiat.withdraw"
	// TypeFiatPayoutRequest holds funds for a bank payout awaiting review.
	TypeFiatPayoutRequest = "fiat.payout.request"
	// TypeFiatPayoutDecide approves (paid) or rejects (funds released) a payout.
	TypeFiatPayoutDecide = "fiat.payout.decide"
	// TypeFiatMerchantCharge charges a customer wallet into the merchant's
	// wallet of the same currency; keyed by the customer wallet.
	TypeFiatMerchantCharge = "fiat.merchant.charge"
	// TypeFiatRequestPay pays a payment request; keyed by the payer wallet.
	TypeFiatRequestPay = "fiat.request.pay"
)

// Fiat event types on events.fiat (spec: Events).
const (
	TypeTransferCompleted = "transfer.completed"
	TypeTransferFailed    = "transfer.failed"
	TypeDepositCompleted  = "deposit.completed"
	TypeRequestPaid       = "request.paid"
	TypeRequestExpired    = "request.expired"
	TypeMerchantCharged   = "merchant.charge.success"
	// TypeWithdrawalCompleted is emitted when a withdrawal leaves a wallet
	// (POST /api/fiat/withdraw); it carries the destination's hint only.
	TypeWithdrawalCompleted = "withdrawal.completed"
	// TypeWalletCreated is emitted when a wallet row is inserted (a user's
	// wallet, a recipient's made on demand, a campaign's), so the analytics
	// copy can name a wallet's owner, currency and kind.
	TypeWalletCreated = "wallet.created"
)

// Ledger entry kinds of the fiat commerce movements.
const (
	LedgerKindMerchantCharge = "fiat:merchant_charge"
	LedgerKindRequestPayment = "fiat:request_payment"
)

// fiatVersions lists the fiat module's message types and their schema versions.
var fiatVersions = map[string]int{
	TypeFiatTransfer:      1,
	TypeFiatDepositCreate: 1,
	TypeFiatDepositCredit: 1,
	TypeFiatWithdraw:      1,
	TypeFiatPayoutRequest: 1,
	TypeFiatPayoutDecide:  1,
	TypeTransferCompleted: 1,
	TypeTransferFailed:    1,
	TypeDepositCompleted:  1,
	TypeWalletCreated:     1,

	TypeWithdrawalCompleted: 1,

	TypeFiatMerchantCharge: 1,
	TypeFiatRequestPay:     1,
	TypeRequestPaid:        1,
	TypeRequestExpired:     1,
	TypeMerchantCharged:    1,

	TypeFiatRefund:    1,
	TypeRefundCreated: 1,
}

// FiatTransfer is the data of a TypeFiatTransfer command. The gateway has
// resolved the recipient e-mail to ToUserID and ToWalletID (creating that
// wallet when needed) and checked that the caller owns FromWalletID.
type FiatTransfer struct {
	FromWalletID string `json:"fromWalletId"`
	ToWalletID   string `json:"toWalletId"`
	FromUserID   string `json:"fromUserId"`
	ToUserID     string `json:"toUserId"`
	Amount       int64  `json:"amount"`
	Memo         string `json:"memo"`
}

// FiatDepositCreate is the data of a TypeFiatDepositCreate command.
type FiatDepositCreate struct {
	DepositID string `json:"depositId"`
	SessionID string `json:"sessionId"`
	URL       string `json:"url"`
	WalletID  string `json:"walletId"`
	UserID    string `json:"userId"`
	Amount    int64  `json:"amount"`
}

// FiatDepositCredit is the data of a TypeFiatDepositCredit command: a
// verified payment_intent.succeeded event naming DepositID. Amount and
// Currency (upper case) are what the processor reported; the consumer
// compares them with the deposit.
type FiatDepositCredit struct {
	DepositID string `json:"depositId"`
	WalletID  string `json:"walletId"`
	EventID   string `json:"eventId"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
}

// FiatWithdraw is the data of a TypeFiatWithdraw command. The gateway
// seals the destination (fiat_withdrawal_destinations) and sends only its
// hint; Destination is the clear value of commands sent before that.
type FiatWithdraw struct {
	WalletID        string `json:"walletId"`
	UserID          string `json:"userId"`
	Amount          int64  `json:"amount"`
	Destination     string `json:"destination,omitempty"`
	WithdrawalID    string `json:"withdrawalId,omitempty"`
	DestinationHint string `json:"destinationHint,omitempty"`
}

// AccountHint is how a bank account or withdrawal destination is shown:
// its last four characters after "****" ("****" alone when it is shorter).
func AccountHint(account string) string {
	r := []rune(account)
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// FiatPayoutRequest is the data of a TypeFiatPayoutRequest command.
type FiatPayoutRequest struct {
	PayoutID string `json:"payoutId"`
	WalletID string `json:"walletId"`
	UserID   string `json:"userId"`
	Amount   int64  `json:"amount"`
	// BankAccount is sealed (storage/sealed) before it leaves the gateway:
	// neither the command topic nor the database holds it in clear.
	BankAccount string `json:"bankAccount"`
	// BankAccountHint is what memos and the audit show: the last four
	// characters.
	BankAccountHint string `json:"bankAccountHint,omitempty"`
}

// FiatPayoutDecide is the data of a TypeFiatPayoutDecide command.
type FiatPayoutDecide struct {
	PayoutID string `json:"payoutId"`
	WalletID string `json:"walletId"`
	Approve  bool   `json:"approve"`
	AdminID  string `json:"adminId"`
}

// TransferCompleted is the data of transfer.completed: the spec's fields,
// and beside them the names the REST answers use (transactionId,
// fromWalletId, toWalletId, memo) and the currency. The spec's names stay
// as they were and are marked deprecated in the catalog; a reader moves to
// the REST names at its pace.
type TransferCompleted struct {
	TxID        string `json:"txId" deprecated:"true" description:"deprecated: transactionId"`
	FromWallet  string `json:"fromWallet" deprecated:"true" description:"deprecated: fromWalletId"`
	ToWallet    string `json:"toWallet" deprecated:"true" description:"deprecated: toWalletId"`
	AmountKzt   int64  `json:"amountKzt" description:"integer minor units of currency"`
	FeeKzt      int64  `json:"feeKzt" description:"integer minor units of currency"`
	Description string `json:"description" deprecated:"true" description:"deprecated: memo"`

	TransactionID string `json:"transactionId"`
	FromWalletID  string `json:"fromWalletId"`
	ToWalletID    string `json:"toWalletId"`
	Memo          string `json:"memo"`
	Currency      string `json:"currency"`
}

// TransferFailed is the data of transfer.failed, with the REST names beside
// the spec's as in TransferCompleted.
type TransferFailed struct {
	FromWallet  string `json:"fromWallet" deprecated:"true" description:"deprecated: fromWalletId"`
	ToWallet    string `json:"toWallet" deprecated:"true" description:"deprecated: toWalletId"`
	AmountKzt   int64  `json:"amountKzt" description:"integer minor units of currency"`
	Reason      string `json:"reason"`
	Description string `json:"description" deprecated:"true" description:"deprecated: memo"`

	FromWalletID string `json:"fromWalletId"`
	ToWalletID   string `json:"toWalletId"`
	Memo         string `json:"memo"`
	Currency     string `json:"currency"`
}

// WalletCreated is the data of wallet.created on events.fiat, keyed by the
// wallet id. Kind is "user" or "campaign".
type WalletCreated struct {
	WalletID  string    `json:"walletId"`
	UserID    string    `json:"userId"`
	Currency  string    `json:"currency"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"createdAt"`
}

// DepositCompleted is the data of deposit.completed.
type DepositCompleted struct {
	DepositID     string `json:"depositId"`
	WalletID      string `json:"walletId"`
	TransactionID string `json:"transactionId"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
}

// WithdrawalCompleted is the data of withdrawal.completed.
type WithdrawalCompleted struct {
	WithdrawalID    string `json:"withdrawalId"`
	WalletID        string `json:"walletId"`
	TransactionID   string `json:"transactionId"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	DestinationHint string `json:"destinationHint"`
}

// FiatMerchantCharge is the data of a TypeFiatMerchantCharge command. The
// gateway has authenticated the merchant's key, found the customer's active
// authorization of that merchant for the wallet and resolved (creating on
// demand) the merchant's wallet of the customer wallet's currency; the
// consumer re-checks all of it under the row locks.
type FiatMerchantCharge struct {
	ChargeID         string `json:"chargeId"`
	MerchantUserID   string `json:"merchantUserId"`
	MerchantKeyID    string `json:"merchantKeyId"`
	MerchantWalletID string `json:"merchantWalletId"`
	CustomerWalletID string `json:"customerWalletId"`
	CustomerUserID   string `json:"customerUserId"`
	AuthorizationID  string `json:"authorizationId"`
	Amount           int64  `json:"amount"`
	PaymentRef       string `json:"paymentRef"`
	Description      string `json:"description,omitempty"`
}

// FiatRequestPay is the data of a TypeFiatRequestPay command.
type FiatRequestPay struct {
	RequestID     string `json:"requestId"`
	PayerWalletID string `json:"payerWalletId"`
	PayerUserID   string `json:"payerUserId"`
	// ReceiverWalletID is the request's wallet, so the batch locks it
	// with the payer's.
	ReceiverWalletID string `json:"receiverWalletId"`
}

// MerchantCharged is the data of merchant.charge.success.
type MerchantCharged struct {
	ChargeID         string `json:"chargeId"`
	TransactionID    string `json:"transactionId"`
	MerchantUserID   string `json:"merchantUserId"`
	MerchantWalletID string `json:"merchantWalletId"`
	CustomerWalletID string `json:"customerWalletId"`
	Amount           int64  `json:"amount"`
	Fee              int64  `json:"fee"`
	Currency         string `json:"currency"`
	PaymentRef       string `json:"paymentRef"`
	Description      string `json:"description"`
}

// RequestPaid is the data of request.paid.
type RequestPaid struct {
	RequestID     string `json:"requestId"`
	Token         string `json:"token"`
	WalletID      string `json:"walletId"`
	PayerWalletID string `json:"payerWalletId"`
	TransactionID string `json:"transactionId"`
	Amount        int64  `json:"amount"`
	Fee           int64  `json:"fee"`
	Currency      string `json:"currency"`
	Description   string `json:"description"`
}

// RequestExpired is the data of request.expired. Reason is "time" or
// "views".
type RequestExpired struct {
	RequestID string    `json:"requestId"`
	Token     string    `json:"token"`
	WalletID  string    `json:"walletId"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Reason    string    `json:"reason"`
	Views     int       `json:"views"`
	MaxViews  int       `json:"maxViews"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Refunds: a merchant refunds a charge, a requester a paid payment request,
// partially or fully, never beyond what was paid.
const (
	// TypeFiatRefund moves a refund from the payee's wallet back to the
	// paying wallet; keyed by the paying (customer) wallet.
	TypeFiatRefund = "fiat.refund"
	// TypeRefundCreated is the event of a settled refund on events.fiat.
	TypeRefundCreated = "refund.created"
)

// Refund sources.
const (
	RefundSourceCharge  = "charge"
	RefundSourceRequest = "request"
)

// FiatRefund is the data of a TypeFiatRefund command. The gateway has
// checked that RefunderUserID owns the charge (its merchant) or the request
// (its creator) and named the two wallets of the original payment, so the
// batch locks them; the consumer re-checks everything under the row locks
// and decides the amount against what remains refundable. Amount 0 refunds
// the whole remaining amount.
type FiatRefund struct {
	RefundID         string `json:"refundId"`
	Source           string `json:"source"`
	ChargeID         string `json:"chargeId,omitempty"`
	RequestID        string `json:"requestId,omitempty"`
	RefunderUserID   string `json:"refunderUserId"`
	FromWalletID     string `json:"fromWalletId"`
	CustomerWalletID string `json:"customerWalletId"`
	Amount           int64  `json:"amount,omitempty"`
	Reason           string `json:"reason,omitempty"`
}

// Validate checks the command's own fields.
func (r FiatRefund) Validate() error {
	switch {
	case r.RefundID == "" || r.RefunderUserID == "" || r.FromWalletID == "" || r.CustomerWalletID == "":
		return errors.New("refund: missing id, refunder or wallet")
	case r.Source == RefundSourceCharge && r.ChargeID == "", r.Source == RefundSourceRequest && r.RequestID == "":
		return errors.New("refund: missing source id")
	case r.Source != RefundSourceCharge && r.Source != RefundSourceRequest:
		return errors.New("refund: unknown source")
	case r.Amount < 0:
		return errors.New("refund: negative amount")
	}
	return nil
}

// RefundCreated is the data of refund.created.
type RefundCreated struct {
	RefundID         string    `json:"refundId"`
	Source           string    `json:"source"`
	ChargeID         string    `json:"chargeId,omitempty"`
	RequestID        string    `json:"requestId,omitempty"`
	RequestToken     string    `json:"requestToken,omitempty"`
	TransactionID    string    `json:"transactionId"`
	MerchantUserID   string    `json:"merchantUserId"`
	MerchantWalletID string    `json:"merchantWalletId"`
	CustomerUserID   string    `json:"customerUserId"`
	CustomerWalletID string    `json:"customerWalletId"`
	Amount           int64     `json:"amount"`
	Currency         string    `json:"currency"`
	Reason           string    `json:"reason"`
	RefundedTotal    int64     `json:"refundedTotal"`
	CreatedAt        time.Time `json:"createdAt"`
}
