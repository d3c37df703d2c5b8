// Package apierr holds the typed API errors and the one mapping from them to
// the spec's status codes and error codes. Handlers return these; the
// server's error handler writes them.
package apierr

import (
	"fmt"
	"net/http"

	"github.com/fintech/platform/schemas"
)

// Error codes shared by every module: the catalog is schemas/errors.go
// (module codes are used from there directly).
const (
	CodeInvalidJSON         = schemas.CodeInvalidJSON
	CodeInvalidCursor       = schemas.CodeInvalidCursor
	CodeContentTypeRequired = schemas.CodeContentTypeRequired
	CodeValidationFailed    = schemas.CodeValidationFailed
	CodePayloadTooLarge     = schemas.CodePayloadTooLarge
	CodeNotFound            = schemas.CodeNotFound
	CodeForbidden           = schemas.CodeForbidden
	CodeAuthRequired        = schemas.CodeAuthRequired
	CodeKeyInvalid          = schemas.CodeKeyInvalid
	CodeRateLimited         = schemas.CodeRateLimited
	CodeUnavailable         = schemas.CodeUnavailable
	CodeInternal            = schemas.CodeInternal
	CodeMethodNotAllowed    = schemas.CodeMethodNotAllowed
	CodeIdempotencyReused   = schemas.CodeIdempotencyKeyReused
)

// Error is an API error: an HTTP status, a code, a message, and for
// validation failures the offending fields.
type Error struct {
	Status  int
	Code    string
	Message string
	Fields  map[string]string
	Extra   map[string]any
	// Cause is the internal error behind the answer: logged by the server
	// with the request id, never sent to the client.
	Cause error
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Unwrap exposes the cause to errors.Is/As.
func (e *Error) Unwrap() error { return e.Cause }

// Because returns a copy carrying the internal cause (for the log only).
func (e *Error) Because(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// Body encodes the error shape `{ error, message, fields?, ...extra }` with
// the API's one error encoder, schemas.ErrorJSON.
func (e *Error) Body() []byte {
	extra := e.Extra
	if len(e.Fields) > 0 {
		extra = make(map[string]any, len(e.Extra)+1)
		for k, v := range e.Extra {
			extra[k] = v
		}
		extra["fields"] = e.Fields
	}
	return schemas.ErrorJSON(e.Code, e.Message, extra)
}

// New builds an error.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// With returns a copy carrying extra top-level body fields.
func (e *Error) With(extra map[string]any) *Error {
	c := *e
	c.Extra = extra
	return &c
}

// InvalidCursor is a `cursor` query value this API did not issue.
func InvalidCursor() *Error {
	return New(http.StatusBadRequest, CodeInvalidCursor, "cursor is not a cursor this API issued")
}

// InvalidJSON is a body that is not well-formed JSON.
func InvalidJSON(detail string) *Error {
	return New(http.StatusBadRequest, CodeInvalidJSON, "request body is not valid JSON: "+detail)
}

// ContentTypeRequired is a write without Content-Type: application/json.
func ContentTypeRequired() *Error {
	return New(http.StatusBadRequest, CodeContentTypeRequired, "writes require Content-Type: application/json")
}

// Validation lists the fields that are missing or invalid.
func Validation(fields map[string]string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed,
		Message: "some fields are missing or invalid", Fields: fields}
}

// PayloadTooLarge is a body over the 1 MiB limit.
func PayloadTooLarge() *Error {
	return New(http.StatusBadRequest, CodePayloadTooLarge, "request body is larger than 1 MiB")
}

// NotFound is an unknown resource or route.
func NotFound(message string) *Error { return New(http.StatusNotFound, CodeNotFound, message) }

// Forbidden is a caller outside the required allowlist.
func Forbidden() *Error {
	return New(http.StatusForbidden, CodeForbidden, "your account is not allowed to do this")
}

// AuthRequired is a missing, malformed, forged or expired bearer token.
func AuthRequired() *Error {
	return New(http.StatusUnauthorized, CodeAuthRequired, "a valid bearer token is required")
}

// KeyInvalid is a revoked, unknown or malformed API key.
func KeyInvalid() *Error {
	return New(http.StatusUnauthorized, CodeKeyInvalid, "the API key is invalid or revoked")
}

// RateLimited is a client over its per-minute budget.
func RateLimited() *Error {
	return New(http.StatusTooManyRequests, CodeRateLimited, "too many requests; retry after the Retry-After seconds")
}

// Unavailable is a command whose result did not come back in time. It is safe
// to retry with the same Idempotency-Key.
func Unavailable() *Error {
	return New(http.StatusServiceUnavailable, CodeUnavailable,
		"the platform is busy; retry with the same Idempotency-Key")
}

// Internal is a server-side failure.
func Internal() *Error {
	return New(http.StatusInternalServerError, CodeInternal, "internal error")
}

// IdempotencyReused is the same Idempotency-Key with a different body.
func IdempotencyReused() *Error {
	return New(http.StatusConflict, CodeIdempotencyReused, "this Idempotency-Key was used with a different request body")
}

// Codes of the AI endpoints (spec, Errors: module ai).
const (
	CodeAuditRequired      = schemas.CodeAuditRequired
	CodeSpendLimitExceeded = schemas.CodeSpendLimitExceeded
	CodeTemplateNotFound   = schemas.CodeTemplateNotFound
)

// AuditRequired is 401 audit_required: an AI endpoint called without a valid
// bearer token.
func AuditRequired() *Error {
	return New(http.StatusUnauthorized, CodeAuditRequired, "this AI endpoint requires a valid bearer token")
}

// SpendLimitExceeded is 402 spend_limit_exceeded: the caller's monthly AI
// request cap is reached.
func SpendLimitExceeded() *Error {
	return New(http.StatusPaymentRequired, CodeSpendLimitExceeded, "monthly AI request limit reached")
}

// TemplateNotFound is 404 template_not_found: no prompt template has the id.
func TemplateNotFound() *Error {
	return New(http.StatusNotFound, CodeTemplateNotFound, "no prompt template with this id")
}
