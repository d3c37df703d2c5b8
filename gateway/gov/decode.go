package gov

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/bind"
)

// num is a JSON number field as sent: it decodes any JSON value without
// failing so that a string or an object becomes a validation error naming
// the field instead of a JSON error.
type num struct {
	Raw       string
	Set       bool
	NotNumber bool
}

// UnmarshalJSON records the literal or that it is not a number.
func (n *num) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = num{Set: true}
	switch {
	case bytes.Equal(b, []byte("null")):
		n.Set = false
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		n.Raw = string(b)
	default:
		n.NotNumber = true
	}
	return nil
}

// intNum is an integer field as sent (quorum, votingDurationSeconds); the
// binder checks it against its minimum and maximum tags.
type intNum struct{ num }

// Present reports whether the field was sent.
func (n intNum) Present() bool { return n.Set }

// Invalid says why the value is not an integer, "" when it is one.
func (n intNum) Invalid() string {
	if _, err := strconv.ParseInt(n.Raw, 10, 64); n.NotNumber || err != nil {
		return "must be an integer"
	}
	return ""
}

// Number is the integer sent.
func (n intNum) Number() float64 {
	x, _ := strconv.ParseInt(n.Raw, 10, 64)
	return float64(x)
}

// PrepareJSONSchema describes the field as the integer a client sends.
func (intNum) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type())
	s.Properties, s.Required = nil, nil
	return nil
}

// fracNum is a threshold as sent: a number strictly between 0 and 1.
type fracNum struct{ num }

// PrepareJSONSchema describes the threshold as the number a client sends.
func (fracNum) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Number.Type()).WithMinimum(0).WithExclusiveMinimum(0).WithMaximum(1).WithExclusiveMaximum(1).
		WithDefault(0.5).WithDescription("the share a passing tally must exceed: greater than 0, less than 1, at most 10 decimal places")
	s.Properties, s.Required = nil, nil
	return nil
}

// or is the integer sent, def when the field was left out.
func (n intNum) or(def int64) int64 {
	if !n.Set {
		return def
	}
	return int64(n.Number())
}

// thresholdDecimals is the precision a threshold may carry.
const thresholdDecimals = 10

// fraction reads a threshold: a number strictly between 0 and 1 with at
// most thresholdDecimals decimals, def when absent. It returns the exact
// decimal's canonical text.
func fraction(v *bind.Validator, field string, n num, def string) string {
	if !n.Set {
		return def
	}
	const reason = "must be a number greater than 0 and less than 1"
	if n.NotNumber {
		v.Fail(field, reason)
		return def
	}
	r, ok := parseDecimal(n.Raw)
	if !ok || r.Sign() <= 0 || r.Cmp(big.NewRat(1, 1)) >= 0 {
		v.Fail(field, reason)
		return def
	}
	if !new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(thresholdDecimals), nil))).IsInt() {
		v.Fail(field, "must have at most 10 decimal places")
		return def
	}
	s := strings.TrimRight(r.FloatString(thresholdDecimals), "0")
	return strings.TrimSuffix(s, ".")
}

// text checks a string field: at most max characters, valid UTF-8, no NUL.
func text(v *bind.Validator, field, s string, max int) {
	switch {
	case !utf8.ValidString(s):
		v.Fail(field, "must be valid UTF-8")
	case strings.ContainsRune(s, 0):
		v.Fail(field, "must not contain NUL characters")
	default:
		v.MaxLen(field, s, max)
	}
}

// isJSONNumber reports whether a raw JSON value is a number literal.
func isJSONNumber(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9'))
}
