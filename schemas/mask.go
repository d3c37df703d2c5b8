package schemas

import "time"

// Mask message types. Commands travel on mask.commands keyed by the mask id,
// so every command touching one mask is applied in order by one consumer;
// events go to events.mask keyed by the mask id.
const (
	// TypeMaskIssue creates a mask. The gateway assigns the mask id so that
	// it can be the partition key.
	TypeMaskIssue = "mask.issue"
	// TypeMaskRevoke soft-revokes a mask (status revoked).
	TypeMaskRevoke = "mask.revoke"
	// TypeMaskCharge authorizes or declines one charge against a mask. Its
	// command id is derived from (owner, maskId, paymentRef), so a replay of
	// the same charge is answered with the stored outcome.
	TypeMaskCharge = "mask.charge"

	// Events of the mask module on events.mask (spec: Events).
	TypeMaskCreated      = "mask.created"
	TypeChargeAuthorized = "charge.authorized"
	TypeChargeDeclined   = "charge.declined"
)

// maskVersions lists the mask module's message types and their schema versions.
var maskVersions = map[string]int{
	TypeMaskIssue:        1,
	TypeMaskRevoke:       1,
	TypeMaskCharge:       1,
	TypeMaskCreated:      1,
	TypeChargeAuthorized: 1,
	TypeChargeDeclined:   1,
}

// Mask kinds (spec: Mask).
const (
	MaskKindSingleUse      = "single-use"
	MaskKindRecurring      = "recurring"
	MaskKindMerchantLocked = "merchant-locked"
	MaskKindCategoryLocked = "category-locked"
)

// MaskKinds lists every mask kind.
var MaskKinds = []string{MaskKindSingleUse, MaskKindRecurring, MaskKindMerchantLocked, MaskKindCategoryLocked}

// Mask statuses. "expired" is never stored: it is how an active mask past
// its expiresAt is shown.
const (
	MaskStatusActive  = "active"
	MaskStatusRevoked = "revoked"
	MaskStatusExpired = "expired"
)

// Mask charge statuses.
const (
	ChargeAuthorized = "authorized"
	ChargeDeclined   = "declined"
)

// Decline reasons of a declined charge (decisions.md, Mask).
const (
	DeclineLimitExceeded     = "limit_exceeded"
	DeclineMerchantLocked    = "merchant_locked"
	DeclineCategoryLocked    = "category_locked"
	DeclineMaskRevoked       = "mask_revoked"
	DeclineMaskExpired       = "mask_expired"
	DeclineSingleUseConsumed = "single_use_consumed"
	DeclineRiskDeclined      = "risk_declined"
)

// MaskIssue is the data of a TypeMaskIssue command.
type MaskIssue struct {
	MaskID           string    `json:"maskId"`
	UserID           string    `json:"userId"`
	Label            string    `json:"label"`
	Kind             string    `json:"kind"`
	LockedToMerchant string    `json:"lockedToMerchant,omitempty"`
	LockedToCategory string    `json:"lockedToCategory,omitempty"`
	Currency         string    `json:"currency"`
	SpendLimitCents  int64     `json:"spendLimitCents"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

// MaskRevoke is the data of a TypeMaskRevoke command; UserID must own the mask.
type MaskRevoke struct {
	MaskID string `json:"maskId"`
	UserID string `json:"userId"`
}

// MaskCharge is the data of a TypeMaskCharge command; UserID must own the
// mask. MerchantUserID, when set, is the platform user behind the merchant,
// who receives the mask-risk-flag reputation event of a risky charge.
type MaskCharge struct {
	MaskID           string `json:"maskId"`
	UserID           string `json:"userId"`
	AmountCents      int64  `json:"amountCents"`
	Merchant         string `json:"merchant"`
	MerchantCategory string `json:"merchantCategory"`
	PaymentRef       string `json:"paymentRef"`
	MerchantUserID   string `json:"merchantUserId,omitempty"`
	// ClientIP is the address the charge came from: a risk flag it causes
	// is charged to that IP's BudgetMaskRiskFlag.
	ClientIP string `json:"clientIp,omitempty"`
}

// Mask is the API and event shape of a mask (the data of mask.created).
// VirtualPan is the only card number there is: no real PAN is ever stored,
// sent or shown, so merchants never see real card data.
type Mask struct {
	ID               string     `json:"id" required:"true" format:"ksuid"`
	UserID           string     `json:"userId" format:"ksuid"`
	Label            string     `json:"label"`
	Kind             string     `json:"kind" enum:"single-use,recurring,merchant-locked,category-locked"`
	LockedToMerchant string     `json:"lockedToMerchant,omitempty"`
	LockedToCategory string     `json:"lockedToCategory,omitempty"`
	Currency         string     `json:"currency"`
	SpendLimitCents  int64      `json:"spendLimitCents" description:"integer minor units"`
	RemainingCents   int64      `json:"remainingCents" required:"true" description:"integer minor units"`
	VirtualPan       string     `json:"virtualPan" required:"true" pattern:"^vmask-[0-9a-f]{32}$"`
	Status           string     `json:"status" required:"true" enum:"active,revoked,expired"`
	ExpiresAt        time.Time  `json:"expiresAt"`
	CreatedAt        time.Time  `json:"createdAt"`
	RevokedAt        *time.Time `json:"revokedAt,omitempty"`
}

// RiskFactor is one explained contribution to a charge's risk score.
type RiskFactor struct {
	Factor string `json:"factor" required:"true"`
	Points int    `json:"points" required:"true"`
}

// MaskChargeResult is the API and event shape of a charge (the data of
// charge.authorized and charge.declined). Idempotent is true only in the
// answer to a replay of the same (maskId, paymentRef).
type MaskChargeResult struct {
	ID               string       `json:"id" required:"true" format:"ksuid"`
	MaskID           string       `json:"maskId" required:"true" format:"ksuid"`
	UserID           string       `json:"userId" format:"ksuid"`
	PaymentRef       string       `json:"paymentRef" required:"true"`
	AmountCents      int64        `json:"amountCents" required:"true" description:"integer minor units"`
	Currency         string       `json:"currency"`
	Merchant         string       `json:"merchant"`
	MerchantCategory string       `json:"merchantCategory"`
	Status           string       `json:"status" required:"true" enum:"authorized,declined"`
	DeclineReason    string       `json:"declineReason,omitempty" enum:"limit_exceeded,merchant_locked,category_locked,mask_revoked,mask_expired,single_use_consumed,risk_declined"`
	RiskScore        int          `json:"riskScore" required:"true" minimum:"0" maximum:"100"`
	RiskFactors      []RiskFactor `json:"riskFactors" required:"true"`
	RemainingCents   int64        `json:"remainingCents" description:"integer minor units"`
	CreatedAt        time.Time    `json:"createdAt"`
	Idempotent       bool         `json:"idempotent" required:"true"`
}

// MaskChargeDeclined is the 402 charge_declined answer to a declined charge:
// the error with the decline reason, the score and the charge itself.
type MaskChargeDeclined struct {
	Error         string           `json:"error" required:"true" enum:"charge_declined"`
	Message       string           `json:"message" required:"true"`
	DeclineReason string           `json:"declineReason" required:"true" enum:"limit_exceeded,merchant_locked,category_locked,mask_revoked,mask_expired,single_use_consumed,risk_declined"`
	RiskScore     int              `json:"riskScore" required:"true" minimum:"0" maximum:"100"`
	RiskFactors   []RiskFactor     `json:"riskFactors"`
	Idempotent    bool             `json:"idempotent"`
	Charge        MaskChargeResult `json:"charge" required:"true"`
}

// MaskStats is the caller's roll-up. Spend is in minor units, summed over
// every currency in totalSpendCents and per currency in spendByCurrency.
type MaskStats struct {
	ActiveMasks       int64            `json:"activeMasks"`
	TotalSpendCents   int64            `json:"totalSpendCents"`
	SpendByCurrency   map[string]int64 `json:"spendByCurrency"`
	Charges           int64            `json:"charges"`
	AuthorizedCharges int64            `json:"authorizedCharges"`
	DeclinedCharges   int64            `json:"declinedCharges"`
	// DeclineRate is declined / all charges, 0..1 (0 without charges).
	DeclineRate float64 `json:"declineRate"`
	// MeanRiskScore is the mean score of all charges (0 without charges).
	MeanRiskScore float64 `json:"meanRiskScore"`
}
