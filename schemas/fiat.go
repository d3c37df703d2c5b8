package schemas

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
)

// Fiat event types on events.fiat (spec: Events).
const (
	TypeTransferCompleted = "transfer.completed"
	TypeTransferFailed    = "transfer.failed"
	TypeDepositCompleted  = "deposit.completed"
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
	Memo         string `json:"memo,omitempty"`
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

// FiatWithdraw is the data of a TypeFiatWithdraw command.
type FiatWithdraw struct {
	WalletID    string `json:"walletId"`
	UserID      string `json:"userId"`
	Amount      int64  `json:"amount"`
	Destination string `json:"destination"`
}

// FiatPayoutRequest is the data of a TypeFiatPayoutRequest command.
type FiatPayoutRequest struct {
	PayoutID    string `json:"payoutId"`
	WalletID    string `json:"walletId"`
	UserID      string `json:"userId"`
	Amount      int64  `json:"amount"`
	BankAccount string `json:"bankAccount"`
}

// FiatPayoutDecide is the data of a TypeFiatPayoutDecide command.
type FiatPayoutDecide struct {
	PayoutID string `json:"payoutId"`
	WalletID string `json:"walletId"`
	Approve  bool   `json:"approve"`
	AdminID  string `json:"adminId"`
}

// TransferCompleted is the data of transfer.completed, exactly the spec's
// fields.
type TransferCompleted struct {
	TxID        string `json:"txId"`
	FromWallet  string `json:"fromWallet"`
	ToWallet    string `json:"toWallet"`
	AmountKzt   int64  `json:"amountKzt"`
	FeeKzt      int64  `json:"feeKzt"`
	Description string `json:"description"`
}

// TransferFailed is the data of transfer.failed.
type TransferFailed struct {
	FromWallet  string `json:"fromWallet"`
	ToWallet    string `json:"toWallet"`
	AmountKzt   int64  `json:"amountKzt"`
	Reason      string `json:"reason"`
	Description string `json:"description"`
}

// DepositCompleted is the data of deposit.completed.
type DepositCompleted struct {
	DepositID     string `json:"depositId"`
	WalletID      string `json:"walletId"`
	TransactionID string `json:"transactionId"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
}
