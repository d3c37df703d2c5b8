package bind

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fintech/platform/gateway/apierr"
)

// String length limits of decisions.md.
const (
	MaxTitle   = 200
	MaxMemo    = 500
	MaxBody    = 20_000
	MaxGeneric = 1_000
)

// Validator collects field problems; Err returns them as one 422.
type Validator struct {
	fields map[string]string
}

// Fail records a problem with a field (the first one per field is kept).
func (v *Validator) Fail(field, reason string) {
	if v.fields == nil {
		v.fields = map[string]string{}
	}
	if _, ok := v.fields[field]; !ok {
		v.fields[field] = reason
	}
}

// Check records reason for field when ok is false.
func (v *Validator) Check(ok bool, field, reason string) {
	if !ok {
		v.Fail(field, reason)
	}
}

// Required records a missing (empty after trimming) string.
func (v *Validator) Required(field, value string) bool {
	if strings.TrimSpace(value) == "" {
		v.Fail(field, "is required")
		return false
	}
	return true
}

// MaxLen records a string longer than max characters.
func (v *Validator) MaxLen(field, value string, max int) {
	if utf8.RuneCountInString(value) > max {
		v.Fail(field, "must be at most "+strconv.Itoa(max)+" characters")
	}
}

// Amount records a missing or invalid amount and returns its value.
func (v *Validator) Amount(field string, a Amount) int64 {
	switch {
	case !a.Set:
		v.Fail(field, "is required")
	case a.Problem != "":
		v.Fail(field, a.Problem)
	}
	return a.Value
}

// AmountOf checks a money field that has two names, field and its alias
// (amount and the spec's amountKzt): exactly one is required, and both
// sent with different values are refused naming both, since silently
// preferring one would move a sum the caller did not mean. The same value
// under both names is the same request and is accepted.
func (v *Validator) AmountOf(field string, a Amount, alias string, b Amount) int64 {
	switch {
	case a.Set && b.Set && a.Problem == "" && b.Problem == "" && a.Value != b.Value:
		msg := fmt.Sprintf("%s (%d) and %s (%d) differ: send one of them", field, a.Value, alias, b.Value)
		v.Fail(field, msg)
		v.Fail(alias, msg)
		return 0
	case !a.Set && b.Set:
		return v.Amount(alias, b)
	case !a.Set:
		v.Fail(field, "is required (or "+alias+")")
		return 0
	}
	if b.Set && b.Problem != "" {
		v.Fail(alias, b.Problem)
	}
	return v.Amount(field, a)
}

// Email records a malformed e-mail address.
func (v *Validator) Email(field, value string) {
	if !v.Required(field, value) {
		return
	}
	addr, err := mail.ParseAddress(value)
	if err != nil || addr.Address != value || len(value) > 254 || !strings.Contains(value[strings.LastIndex(value, "@")+1:], ".") {
		v.Fail(field, "must be an e-mail address")
	}
}

// OneOf records a value outside the allowed set.
func (v *Validator) OneOf(field, value string, allowed ...string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	v.Fail(field, "must be one of "+strings.Join(allowed, ", "))
}

// Err returns the collected problems as a 422, or nil.
func (v *Validator) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return apierr.Validation(v.fields)
}
