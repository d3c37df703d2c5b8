package schemas

import "time"

// Answers of the fiat routes that the gateway builds itself (the answers of
// commands, built by the fiat applier, are in fiat_results.go). The tags
// describe them in the OpenAPI document (gateway/openapi reflects them).

// FiatWallet is one of the caller's wallets: the answer of creating, listing,
// freezing and unfreezing wallets, and the wallets of the dashboard.
type FiatWallet struct {
	ID        string    `json:"id" required:"true" format:"ksuid"`
	Currency  string    `json:"currency" required:"true" enum:"KZT,USD"`
	Balance   int64     `json:"balance" required:"true" description:"integer minor units"`
	Status    string    `json:"status" required:"true" enum:"active,frozen,deleted"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// FiatPublicWallet is what a payer needs to recognise a receive link: no
// e-mail, user id or balance.
type FiatPublicWallet struct {
	ID        string `json:"id" required:"true" format:"ksuid"`
	Currency  string `json:"currency" required:"true" enum:"KZT,USD"`
	Status    string `json:"status" required:"true" enum:"active,frozen,deleted"`
	OwnerName string `json:"ownerName" required:"true"`
}

// FiatItems is the answer of a list that is not paginated: every item.
type FiatItems[T any] struct {
	Items []T `json:"items" required:"true" nullable:"false"`
}

// FiatDeposit is a deposit (a processor checkout session and its outcome)
// in the caller's deposit history and the admins' review queue. ID and
// DepositID are the same id.
type FiatDeposit struct {
	ID            string     `json:"id" required:"true" format:"ksuid"`
	DepositID     string     `json:"depositId" required:"true" format:"ksuid"`
	WalletID      string     `json:"walletId" required:"true" format:"ksuid"`
	Amount        int64      `json:"amount" required:"true" description:"integer minor units"`
	Currency      string     `json:"currency" required:"true"`
	Status        string     `json:"status" required:"true" enum:"pending,completed,needs_review,refunded"`
	SessionID     string     `json:"sessionId" required:"true"`
	URL           string     `json:"url" required:"true" description:"the processor's checkout page of the session"`
	TransactionID string     `json:"transactionId,omitempty" format:"ksuid" description:"the credit, once completed"`
	CreatedAt     time.Time  `json:"createdAt" required:"true"`
	CompletedAt   *time.Time `json:"completedAt,omitempty"`
	// PaidAmount and PaidCurrency are what the processor reported paid when
	// it did not match the deposit, or for a second payment: what a refund
	// returns.
	PaidAmount   *int64 `json:"paidAmount,omitempty" description:"integer minor units the processor reported paid, when it differs from the deposit or is a second payment; a refund returns this"`
	PaidCurrency string `json:"paidCurrency,omitempty" description:"the currency the processor reported paid, beside paidAmount"`
	PaymentOf    string `json:"paymentOf,omitempty" format:"ksuid" description:"a second payment: the deposit the processor charged again (never credited; refund it)"`
}

// FiatWebhookIgnored is the 200 answer to a verified processor event the
// platform does not act on (another event type, or no deposit named): the
// processor stops retrying it.
type FiatWebhookIgnored struct {
	Received bool   `json:"received" required:"true"`
	Ignored  bool   `json:"ignored" required:"true"`
	EventID  string `json:"eventId" required:"true"`
}

// FiatVerifyResult is the answer of POST /processor/verify: the event was
// verified and applied (or needed nothing). LedgerID is the ledger entry
// of the credit, null when nothing was credited.
type FiatVerifyResult struct {
	OK         bool    `json:"ok" required:"true"`
	Anchored   bool    `json:"anchored" required:"true"`
	LedgerID   *string `json:"ledger_id" required:"true" format:"ksuid"`
	Idempotent bool    `json:"idempotent" required:"true"`
	EventID    string  `json:"event_id" required:"true"`
}

// FiatTransaction is one movement of the caller's history. Direction is
// "out" when the caller's money left (they are the sender). ID and
// TransactionID are the same id; the amount and fee are in the currency's
// minor units whatever their names say.
type FiatTransaction struct {
	ID            string    `json:"id" required:"true" format:"ksuid"`
	TransactionID string    `json:"transactionId" required:"true" format:"ksuid"`
	Kind          string    `json:"kind" required:"true" description:"transfer, deposit, withdrawal, payout_hold, payout_release, merchant_charge, request_payment, refund, donation, ..."`
	Status        string    `json:"status" required:"true"`
	Direction     string    `json:"direction" required:"true" enum:"in,out"`
	FromWalletID  string    `json:"fromWalletId,omitempty"`
	ToWalletID    string    `json:"toWalletId,omitempty"`
	AmountKzt     int64     `json:"amountKzt" required:"true" description:"integer minor units"`
	FeeKzt        int64     `json:"feeKzt" required:"true" description:"integer minor units"`
	Currency      string    `json:"currency" required:"true"`
	Memo          string    `json:"memo" required:"true"`
	CreatedAt     time.Time `json:"createdAt" required:"true"`
}

// FiatDashboard is the caller's aggregated snapshot: wallets, balances per
// currency, transaction totals, pending items, open payment requests, KYC
// state and the pre-KYC limits.
type FiatDashboard struct {
	Wallets      []FiatWallet         `json:"wallets" required:"true" nullable:"false"`
	Balances     map[string]int64     `json:"balances" required:"true" nullable:"false" description:"integer minor units by currency"`
	Transactions FiatDashboardTotals  `json:"transactions" required:"true"`
	Requests     FiatDashboardPending `json:"requests" required:"true"`
	OpenRequests []FiatPaymentRequest `json:"openRequests" required:"true" nullable:"false"`
	KYC          FiatDashboardKYC     `json:"kyc" required:"true"`
	Limits       FiatDashboardLimits  `json:"limits" required:"true"`
	GeneratedAt  time.Time            `json:"generatedAt" required:"true"`
}

// FiatDashboardTotals are the caller's transaction totals and the most
// recent transactions.
type FiatDashboardTotals struct {
	Count         int64             `json:"count" required:"true"`
	SentTotal     int64             `json:"sentTotal" required:"true" description:"integer minor units"`
	ReceivedTotal int64             `json:"receivedTotal" required:"true" description:"integer minor units"`
	FeesPaid      int64             `json:"feesPaid" required:"true" description:"integer minor units"`
	Recent        []FiatTransaction `json:"recent" required:"true" nullable:"false"`
}

// FiatDashboardPending counts what awaits the processor, an admin or a payer.
type FiatDashboardPending struct {
	PendingDeposits     int64 `json:"pendingDeposits" required:"true"`
	PendingPayouts      int64 `json:"pendingPayouts" required:"true"`
	OpenPaymentRequests int   `json:"openPaymentRequests" required:"true"`
}

// FiatDashboardKYC is the caller's KYC state: approved, and the status of
// the latest submission ("" without one).
type FiatDashboardKYC struct {
	Approved bool   `json:"approved" required:"true"`
	Status   string `json:"status" required:"true"`
}

// FiatDashboardLimits are the pre-KYC caps and what the caller used of the
// monthly one; CapsApply is false once KYC is approved.
type FiatDashboardLimits struct {
	PerTransfer  int64 `json:"perTransfer" required:"true" description:"integer minor units"`
	DailyDeposit int64 `json:"dailyDeposit" required:"true" description:"integer minor units"`
	Monthly      int64 `json:"monthly" required:"true" description:"integer minor units"`
	MonthlyUsed  int64 `json:"monthlyUsed" required:"true" description:"integer minor units"`
	CapsApply    bool  `json:"capsApply" required:"true"`
}

// FiatAuditEntry is one row of the append-only audit log.
type FiatAuditEntry struct {
	ID        string    `json:"id" required:"true" format:"ksuid"`
	Actor     string    `json:"actor" required:"true" description:"a user id, processor or admin:<user id>"`
	Action    string    `json:"action" required:"true"`
	Subject   string    `json:"subject" required:"true"`
	Amount    int64     `json:"amount" required:"true" description:"integer minor units"`
	Currency  string    `json:"currency" required:"true"`
	Detail    string    `json:"detail" required:"true"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// FiatKYC is a KYC submission: the answer of submitting (201) and of an
// admin's decision (with the user id).
type FiatKYC struct {
	ID        string     `json:"id" required:"true" format:"ksuid"`
	Status    string     `json:"status" required:"true" enum:"pending,approved,rejected"`
	UserID    string     `json:"userId,omitempty" format:"ksuid"`
	CreatedAt time.Time  `json:"createdAt" required:"true"`
	DecidedAt *time.Time `json:"decidedAt,omitempty"`
}

// FiatMerchantKey is a merchant API key. Key, the plaintext, appears only in
// the answer that issued it; listings show Prefix.
type FiatMerchantKey struct {
	ID        string     `json:"id" required:"true" format:"ksuid"`
	Key       string     `json:"key,omitempty" pattern:"^mk_live_[0-9a-f]{32}$" description:"the key itself, shown once"`
	Prefix    string     `json:"prefix" required:"true"`
	Label     string     `json:"label" required:"true"`
	Status    string     `json:"status" required:"true" enum:"active,revoked"`
	CreatedAt time.Time  `json:"createdAt" required:"true"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// FiatAuthorization is a wallet owner's authorization of a merchant to
// charge one wallet up to MaxAmount in total; Remaining is what is left.
type FiatAuthorization struct {
	ID             string     `json:"id" required:"true" format:"ksuid"`
	WalletID       string     `json:"walletId" required:"true" format:"ksuid"`
	MerchantUserID string     `json:"merchantUserId" required:"true" format:"ksuid"`
	MaxAmount      int64      `json:"maxAmount" required:"true" description:"integer minor units"`
	Remaining      int64      `json:"remaining" required:"true" description:"integer minor units"`
	Status         string     `json:"status" required:"true" enum:"active,revoked"`
	CreatedAt      time.Time  `json:"createdAt" required:"true"`
	RevokedAt      *time.Time `json:"revokedAt,omitempty"`
}

// FiatPaymentRequest is a payment request: its shareable token and pay URL,
// its state and how many public views remain.
type FiatPaymentRequest struct {
	ID             string     `json:"id" required:"true" format:"ksuid"`
	Token          string     `json:"token" required:"true" pattern:"^pr_[0-9a-f]{32}$"`
	PayURL         string     `json:"payUrl" required:"true"`
	Status         string     `json:"status" required:"true" enum:"open,paid,expired"`
	Amount         int64      `json:"amount" required:"true" description:"integer minor units"`
	Currency       string     `json:"currency" required:"true"`
	Description    string     `json:"description" required:"true"`
	Views          int        `json:"views" required:"true"`
	MaxViews       int        `json:"maxViews" required:"true"`
	RemainingViews int        `json:"remainingViews" required:"true"`
	ExpiresAt      time.Time  `json:"expiresAt" required:"true"`
	CreatedAt      time.Time  `json:"createdAt" required:"true"`
	PaidAt         *time.Time `json:"paidAt,omitempty"`
}

// FiatRefundPage is a page of the refunds of a charge or payment request,
// newest first, with the totals of all of them: Total refunds,
// RefundedTotal refunded and Refundable left to refund.
type FiatRefundPage struct {
	Items         []FiatRefundResult `json:"items" required:"true" nullable:"false"`
	Total         int64              `json:"total" required:"true"`
	NextCursor    *string            `json:"nextCursor" required:"true"`
	RefundedTotal int64              `json:"refundedTotal" required:"true" description:"integer minor units"`
	Refundable    int64              `json:"refundable" required:"true" description:"integer minor units"`
}

// FiatReconcileReport is the answer of GET /admin/reconcile.
type FiatReconcileReport struct {
	OK         bool                    `json:"ok" required:"true"`
	Source     string                  `json:"source" required:"true" enum:"postgres,clickhouse"`
	Currencies []FiatCurrencyReconcile `json:"currencies" required:"true"`
	// DepositReview counts paid deposits that were not credited (awaiting
	// an admin, or refunded to the processor): money the processor took
	// that no wallet holds.
	DepositReview FiatDepositReviewSummary `json:"depositReview" required:"true"`
	GeneratedAt   time.Time                `json:"generatedAt" required:"true"`
	Alert         *FiatAlertResult         `json:"alert,omitempty"`
}

// FiatCurrencyReconcile is one currency's line of the reconciliation
// report, in minor units.
type FiatCurrencyReconcile struct {
	Currency               string `json:"currency" required:"true"`
	ProcessorCreditedMinor int64  `json:"processorCreditedMinor" required:"true"`
	DepositsCreditedMinor  int64  `json:"depositsCreditedMinor" required:"true"`
	WithdrawnMinor         int64  `json:"withdrawnMinor" required:"true"`
	PaidOutMinor           int64  `json:"paidOutMinor" required:"true"`
	FeesMinor              int64  `json:"feesMinor" required:"true"`
	FeeWalletsMinor        int64  `json:"feeWalletsMinor" required:"true"`
	ExpectedBalancesMinor  int64  `json:"expectedBalancesMinor" required:"true"`
	WalletBalancesMinor    int64  `json:"walletBalancesMinor" required:"true"`
	// Drift is what the books say should be in the wallets minus what is.
	Drift int64 `json:"drift" required:"true" description:"expected minus actual wallet balances, minor units"`
	// ProcessorDrift is what the processor charged minus what the ledger
	// credited.
	ProcessorDrift int64 `json:"processorDrift" required:"true" description:"processor credited minus ledger deposits, minor units"`
	OK             bool  `json:"ok" required:"true"`
}

// FiatDepositReviewSummary counts the paid deposits that were not credited:
// awaiting an admin (needs_review) and refunded, with their sums.
type FiatDepositReviewSummary struct {
	NeedsReview       int64 `json:"needsReview" required:"true"`
	NeedsReviewAmount int64 `json:"needsReviewAmount" required:"true" description:"integer minor units"`
	Refunded          int64 `json:"refunded" required:"true"`
	RefundedAmount    int64 `json:"refundedAmount" required:"true" description:"integer minor units"`
}

// FiatAlertResult says whether the drift alert reached its target.
type FiatAlertResult struct {
	Sent   bool   `json:"sent" required:"true"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}
