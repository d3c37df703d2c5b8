package partner

import (
	"bytes"
	"strconv"

	"github.com/swaggest/jsonschema-go"
)

// count is a non-money integer field (place, capacity, entries) as sent by a
// partner. Like bind.Amount it decodes any JSON value without failing, so a
// string, fraction or overflow is a validation error naming the field.
type count struct {
	Value   int64
	Set     bool
	Problem string
}

// UnmarshalJSON records the value or what is wrong with it.
func (n *count) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = count{Set: true}
	switch {
	case bytes.Equal(b, []byte("null")):
		n.Set = false
	case len(b) > 0 && b[0] == '"':
		n.Problem = "must be an integer, not a string"
	case bytes.ContainsAny(b, ".eE"):
		n.Problem = "must be an integer, not a fraction"
	default:
		v, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			n.Problem = "must be an integer"
			if len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
				n.Problem = "is out of range"
			}
			return nil
		}
		n.Value = v
	}
	return nil
}

// within returns the value, or records why it is missing or outside lo..hi.
func (n count) within(fail func(string), lo, hi int64) int64 {
	switch {
	case !n.Set:
		fail("is required")
	case n.Problem != "":
		fail(n.Problem)
	case n.Value < lo || n.Value > hi:
		fail("must be an integer from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10))
	}
	return n.Value
}

// place, seats and entries are the counts partners send, each described
// with its bounds (a bound on a field of a custom type is not kept by the
// document, so each bound is a type).
type (
	place   struct{ count }
	seats   struct{ count }
	entries struct{ count }
)

func countSchema(s *jsonschema.Schema, lo, hi float64, desc string) error {
	s.WithType(jsonschema.Integer.Type()).WithFormat("int64").WithMinimum(lo).WithMaximum(hi).WithDescription(desc)
	s.Properties = nil
	s.Required = nil
	return nil
}

// PrepareJSONSchema describes a podium place.
func (place) PrepareJSONSchema(s *jsonschema.Schema) error {
	return countSchema(s, 1, maxPlace, "podium place, 1 is the winner")
}

// PrepareJSONSchema describes a tournament's capacity.
func (seats) PrepareJSONSchema(s *jsonschema.Schema) error {
	return countSchema(s, 1, maxSeats, "seats of the tournament")
}

// PrepareJSONSchema describes a tournament's entries.
func (entries) PrepareJSONSchema(s *jsonschema.Schema) error {
	return countSchema(s, 0, maxSeats, "players registered, at most capacity")
}
