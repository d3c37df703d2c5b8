package sign

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Errors of Canonical, each a reason fit for a validation message.
var (
	ErrNotObject = errors.New("must be a JSON object")
	ErrBadText   = errors.New("must contain only valid UTF-8 text without NUL characters")
	ErrNotJCS    = errors.New("cannot be canonicalized (RFC 8785): numbers must fit an IEEE-754 double, keys must be unique")
)

// Canonical returns the RFC 8785 (JCS) canonical form of a JSON object:
// keys sorted by UTF-16 code units, no whitespace, ECMAScript number
// formatting, UTF-8, no HTML escaping. The signature covers these bytes, so
// any re-serialisation of the same object (key order, spacing, escapes,
// 1.0 vs 1) signs and verifies the same. raw must be a JSON object whose
// strings hold no NUL and no invalid UTF-8.
func Canonical(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, ErrNotObject
	}
	if !utf8.Valid(raw) {
		return nil, ErrBadText
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, ErrNotObject
	}
	if hasNUL(v) {
		return nil, ErrBadText
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, ErrNotJCS
	}
	return out, nil
}

// hasNUL reports a NUL character in any key or string of v.
func hasNUL(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.ContainsRune(t, 0)
	case []any:
		for _, e := range t {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// Digest is the hex SHA-256 of canonical bytes.
func Digest(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}
