package schemas

// A paid deposit that cannot be credited (its wallet is frozen or deleted)
// is not refused: the money was received, so the deposit is kept as
// needs_review for fiat admins, who credit it (once the wallet is active) or
// refund it to the processor.
const (
	// TypeFiatDepositReview is a fiat admin's decision on a deposit in
	// needs_review, keyed by its wallet id.
	TypeFiatDepositReview = "fiat.deposit.review"
	// TypeDepositNeedsReview is emitted when a paid deposit could not be
	// credited.
	TypeDepositNeedsReview = "deposit.needs_review"
	// TypeDepositRefunded is emitted when an admin refunds a deposit in
	// needs_review to the processor.
	TypeDepositRefunded = "deposit.refunded"
)

// Deposit statuses beyond "pending" and "completed".
const (
	DepositNeedsReview = "needs_review"
	DepositRefunded    = "refunded"
)

// Review actions.
const (
	ReviewCredit = "credit"
	ReviewRefund = "refund"
)

var fiatReviewVersions = map[string]int{
	TypeFiatDepositReview:  1,
	TypeDepositNeedsReview: 1,
	TypeDepositRefunded:    1,
}

// FiatDepositReview is the data of a TypeFiatDepositReview command.
type FiatDepositReview struct {
	DepositID   string `json:"depositId"`
	WalletID    string `json:"walletId"`
	Action      string `json:"action"`
	AdminUserID string `json:"adminUserId"`
	Reason      string `json:"reason,omitempty"`
}

// DepositReviewEvent is the data of TypeDepositNeedsReview and
// TypeDepositRefunded.
type DepositReviewEvent struct {
	DepositID string `json:"depositId"`
	WalletID  string `json:"walletId"`
	EventID   string `json:"eventId"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Reason    string `json:"reason"`
}
