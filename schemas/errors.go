package schemas

import "encoding/json"

// Error codes: every `error` code any endpoint of the API answers with, in
// one place (decisions.md, Conventions). The gateway answers with them
// through gateway/apierr, the consumers through the reply bodies they build
// with ErrorJSON; both import them from here. A new code is added here, in
// the section of its module.
const (
	// Codes every module may answer.
	CodeInvalidJSON          = "invalid_json"
	CodeInvalidCursor        = "invalid_cursor"
	CodeContentTypeRequired  = "content_type_required"
	CodeValidationFailed     = "validation_failed"
	CodePayloadTooLarge      = "payload_too_large"
	CodeNotFound             = "not_found"
	CodeForbidden            = "forbidden"
	CodeAuthRequired         = "auth_required"
	CodeKeyInvalid           = "key_invalid"
	CodeRateLimited          = "rate_limited"
	CodeUnavailable          = "unavailable"
	CodeInternal             = "internal"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeIdempotencyKeyReused = "idempotency_key_reused"
	CodeInvalidState         = "invalid_state"
	// CodeEmailUnverified answers a caller whose e-mail is not verified on
	// a route that needs it.
	CodeEmailUnverified = "email_unverified"
	// CodeSignatureInvalid is a webhook whose signature does not verify
	// (processor deposits; decisions.md, Partner receivers).
	CodeSignatureInvalid = "signature_invalid"
	// CodeInvalidCommand is the one answer to a command a consumer cannot
	// read (the gateway never sends one).
	CodeInvalidCommand = "invalid_command"

	// AI endpoints (spec, Errors: module ai).
	CodeAuditRequired      = "audit_required"
	CodeSpendLimitExceeded = "spend_limit_exceeded"
	CodeTemplateNotFound   = "template_not_found"

	// Identity.
	CodeEmailTaken          = "email_taken"
	CodeInvalidCredentials  = "invalid_credentials"
	CodeMailUnavailable     = "mail_unavailable"
	CodeVerificationInvalid = "verification_invalid"
	CodeUserNotFound        = "user_not_found"
	// CodeMFARequired is a login of an account with two-factor that gave no
	// code (401), or an admin route called by an admin without two-factor in
	// production (403).
	CodeMFARequired = "mfa_required"
	// CodeInsufficientScope is a restricted API key used on a route its
	// scopes do not reach; the answer names the scope it needs.
	CodeInsufficientScope = "insufficient_scope"

	// Fiat (spec: Errors; decisions.md, Fiat).
	CodeWalletNotFound       = "wallet_not_found"
	CodeWalletExists         = "wallet_exists"
	CodeWalletInactive       = "wallet_inactive"
	CodeRecipientNotFound    = "recipient_not_found"
	CodeKYCRequired          = "kyc_required"
	CodeKYCNotFound          = "kyc_not_found"
	CodeDepositNotFound      = "deposit_not_found"
	CodeSessionNotFound      = "session_not_found"
	CodeAmountMismatch       = "amount_mismatch"
	CodePayoutNotFound       = "payout_not_found"
	CodeCurrencyMismatch     = "currency_mismatch"
	CodeInvalidEvent         = "invalid_event"
	CodeEventMismatch        = "event_mismatch"
	CodeProcessorUnavailable = "processor_unavailable"
	CodeAnalyticsUnavailable = "analytics_unavailable"
	// Fiat commerce: payment requests, merchant keys and charges, refunds.
	CodeRequestNotFound      = "request_not_found"
	CodeRequestPaid          = "request_paid"
	CodeRequestExpired       = "request_expired"
	CodeRequestNotPaid       = "request_not_paid"
	CodeCannotPayOwnRequest  = "cannot_pay_own_request"
	CodeKeyLimitReached      = "key_limit_reached"
	CodeMerchantNotFound     = "merchant_not_found"
	CodeChargeNotAuthorized  = "charge_not_authorized"
	CodeAuthorizationExceeds = "authorization_exceeded"
	CodeChargeNotFound       = "charge_not_found"
	CodeRefundExceedsCharge  = "refund_exceeds_charge"

	// Mask. CodeChargeDeclined is the error code of a 402 declined charge.
	CodeChargeDeclined = "charge_declined"
	CodeMaskExists     = "mask_exists"

	// Trade.
	CodeAccountNotFound     = "account_not_found"
	CodeInsufficientBalance = "insufficient_balance"

	// Ledger.
	CodeEntryExists = "entry_exists"

	// Governance (decisions.md, "Governance").
	CodeVotingClosed      = "voting_closed"
	CodeAlreadyVoted      = "already_voted"
	CodeProposalNotClosed = "proposal_not_closed"

	// Charity.
	CodeCampaignNotActive = "campaign_not_active"

	// Build.
	CodePlanVacancyLimitReached = "plan_vacancy_limit_reached"

	// Webhooks.
	CodeWebhookLimitReached = "webhook_limit_reached"
)

// ErrorBody is the error shape of every API answer (decisions.md,
// Conventions): { "error": code, "message": text, ...extra }. Consumers build
// business rejections with it so the gateway can answer them unchanged.
type ErrorBody struct {
	Error   string            `json:"error"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// ErrorJSON is the one encoder of error bodies, for the gateway
// (apierr.Error.Body) and the consumers alike: { error, message, ...extra }
// with extra's top-level fields (such as `fields` of a validation failure)
// merged in; code and message win over extra keys of the same name.
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

// IdempotencyConflict is the 409 body for a reused key.
func IdempotencyConflict() []byte {
	return ErrorJSON(CodeIdempotencyKeyReused, "this Idempotency-Key was used with a different request body", nil)
}
