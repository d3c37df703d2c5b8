package schemas

import "encoding/json"

// ErrorBody is the error shape of every API answer (decisions.md,
// Conventions): { "error": code, "message": text, ...extra }. Consumers build
// business rejections with it so the gateway can answer them unchanged.
type ErrorBody struct {
	Error   string            `json:"error"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// ErrorJSON encodes an error body, merging extra top-level fields.
func ErrorJSON(code, message string, extra map[string]any) []byte {
	if len(extra) == 0 {
		b, _ := json.Marshal(ErrorBody{Error: code, Message: message})
		return b
	}
	m := make(map[string]any, len(extra)+2)
	for k, v := range extra {
		m[k] = v
	}
	m["error"] = code
	m["message"] = message
	b, _ := json.Marshal(m)
	return b
}

// CodeIdempotencyKeyReused answers a reused Idempotency-Key with another body.
const CodeIdempotencyKeyReused = "idempotency_key_reused"

// IdempotencyConflict is the 409 body for a reused key.
func IdempotencyConflict() []byte {
	return ErrorJSON(CodeIdempotencyKeyReused, "this Idempotency-Key was used with a different request body", nil)
}

// Error codes of the fiat module (spec: Errors; decisions.md, Fiat).
const (
	CodeWalletNotFound   = "wallet_not_found"
	CodeWalletInactive   = "wallet_inactive"
	CodeKYCRequired      = "kyc_required"
	CodeDepositNotFound  = "deposit_not_found"
	CodeAmountMismatch   = "amount_mismatch"
	CodePayoutNotFound   = "payout_not_found"
	CodeInvalidState     = "invalid_state"
	CodeCurrencyMismatch = "currency_mismatch"
)

// Error codes of the commerce commands.
const (
	CodeRequestNotFound      = "request_not_found"
	CodeRequestPaid          = "request_paid"
	CodeRequestExpired       = "request_expired"
	CodeCannotPayOwnRequest  = "cannot_pay_own_request"
	CodeChargeNotAuthorized  = "charge_not_authorized"
	CodeAuthorizationExceeds = "authorization_exceeded"
)

// Error codes of the refunds.
const (
	CodeChargeNotFound      = "charge_not_found"
	CodeRefundExceedsCharge = "refund_exceeds_charge"
	CodeRequestNotPaid      = "request_not_paid"
)

// CodeCampaignNotActive answers a donation to a campaign that has ended.
const CodeCampaignNotActive = "campaign_not_active"
