package bind

import (
	"github.com/swaggest/jsonschema-go"

	"bytes"
	"strconv"
)

// MaxAmount is the largest amount in minor units any endpoint accepts.
const MaxAmount = 1_000_000_000_000_000 // 10^15

// Amount is a money amount in integer minor units as sent by a client. It
// decodes any JSON value without failing so that a string, fractional,
// negative or oversized amount becomes a validation error naming the field
// instead of a JSON error.
type Amount struct {
	Value   int64
	Set     bool
	Problem string
}

// UnmarshalJSON records the value or what is wrong with it.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*a = Amount{Set: true}
	switch {
	case bytes.Equal(b, []byte("null")):
		a.Set = false
	case len(b) > 0 && b[0] == '"':
		a.Problem = "must be an integer number of minor units, not a string"
	case bytes.ContainsAny(b, ".eE"):
		a.Problem = "must be an integer number of minor units, not a fraction"
	default:
		n, err := strconv.ParseInt(string(b), 10, 64)
		switch {
		case err != nil && len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
			a.Problem = "must be at most 1000000000000000"
		case err != nil:
			a.Problem = "must be an integer number of minor units"
		case n <= 0:
			a.Problem = "must be a positive integer"
		case n > MaxAmount:
			a.Problem = "must be at most 1000000000000000"
		default:
			a.Value = n
		}
	}
	return nil
}

// PrepareJSONSchema describes an amount as what a client must send: integer
// minor units from 1 to MaxAmount.
func (Amount) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithFormat("int64").WithMinimum(1).WithMaximum(MaxAmount).
		WithDescription("integer minor units (1 to 10^15)")
	s.Properties = nil
	s.Required = nil
	return nil
}

// AmountChoice describes, in the schema of a request, a money field sent
// under one of two names (amount and the spec's amountKzt): exactly one of
// them is required, so a typed client refuses a request with neither.
// Validator.AmountOf is the server's side of the same rule.
//
// Each alternative repeats its property (not only its name in required):
// a generator such as openapi-typescript types an alternative from its own
// properties, and one with none becomes `unknown`, which refuses nothing.
func AmountChoice(s *jsonschema.Schema, field, alias string) error {
	a, okA := s.Properties[field]
	b, okB := s.Properties[alias]
	if !okA || !okB {
		// The reflection of the struct's parameters (path, query,
		// header), not of its body: no amount there.
		return nil
	}
	s.OneOf = nil
	for _, alt := range []struct {
		name string
		p    jsonschema.SchemaOrBool
	}{{field, a}, {alias, b}} {
		one := (&jsonschema.Schema{}).WithType(jsonschema.Object.Type()).WithRequired(alt.name).WithPropertiesItem(alt.name, alt.p)
		s.OneOf = append(s.OneOf, one.ToSchemaOrBool())
	}
	return nil
}
