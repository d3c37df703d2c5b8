package schemas

import (
	"errors"

	"github.com/swaggest/jsonschema-go"
)

// RawObject is a JSON object kept as the bytes it was stored as (the meta
// of a ledger entry or a reputation event); empty encodes as null.
type RawObject []byte

// MarshalJSON returns the bytes, or null when there are none.
func (m RawObject) MarshalJSON() ([]byte, error) {
	if len(m) == 0 {
		return []byte("null"), nil
	}
	return m, nil
}

// UnmarshalJSON keeps a copy of the bytes.
func (m *RawObject) UnmarshalJSON(b []byte) error {
	if m == nil {
		return errors.New("schemas.RawObject: UnmarshalJSON on nil pointer")
	}
	*m = append((*m)[:0], b...)
	return nil
}

// PrepareJSONSchema describes the value as a nullable JSON object.
func (RawObject) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Object.Type()).WithAdditionalProperties(jsonschema.SchemaOrBool{TypeBoolean: &[]bool{true}[0]})
	s.Items = nil
	s.Format = nil
	s.AddType(jsonschema.Null)
	return nil
}
