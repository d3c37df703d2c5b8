// Package ledger stores the hash-chained ledger: the canonical JSON and the
// hash rule of an entry, the entries table with its head row, reads for the
// API, and the streaming chain verification.
package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Canonical encodes v as canonical JSON: object keys sorted by their UTF-8
// bytes, no insignificant whitespace, strings with only the escapes JSON
// requires (", \ and control characters; no HTML escaping, non-ASCII kept as
// UTF-8), and numbers normalised: a number with an integral value is written
// as an integer (1.0 and 1e2 become 1 and 100), any other as the shortest
// representation that round-trips a float64. v is first marshalled with
// encoding/json, so struct tags apply.
//
// A value as a JSON decoder leaves it in an any (maps, slices, strings,
// bools, float64 numbers: a ledger command's meta) is written directly,
// without the round trip through encoding/json that a Go value needs; the
// bytes are the same (TestCanonicalDecodedMatchesMarshalled).
func Canonical(v any) ([]byte, error) {
	if b, ok := appendDecoded(nil, v, 0); ok {
		return b, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return CanonicalizeJSON(raw)
}

// CanonicalizeJSON rewrites a JSON document in canonical form (see Canonical).
func CanonicalizeJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical json: trailing data")
	}
	return appendCanonical(nil, v)
}

func appendCanonical(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return AppendString(b, x), nil
	case json.Number:
		return appendNumber(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	default:
		return nil, fmt.Errorf("canonical json: unexpected %T", v)
	}
}

// maxDecodedDepth bounds appendDecoded's recursion; deeper values take the
// marshalled path.
const maxDecodedDepth = 1000

// appendDecoded appends the canonical form of v when v holds only what a
// JSON decoder makes of a document, and reports false for anything else,
// which Canonical then marshals: Go values (struct tags and methods
// apply), json.Number, invalid UTF-8 (encoding/json replaces it, which may
// merge two keys into one), NaN and infinities (encoding/json refuses
// them).
func appendDecoded(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxDecodedDepth {
		return nil, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		if !utf8.ValidString(x) {
			return nil, false
		}
		return AppendString(b, x), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false
		}
		return appendFloat(b, x), true
	case []any:
		if x == nil {
			return append(b, "null"...), true // as encoding/json writes a nil slice
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendDecoded(b, e, depth+1); !ok {
				return nil, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			if !utf8.ValidString(k) {
				return nil, false
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendDecoded(b, x[k], depth+1); !ok {
				return nil, false
			}
		}
		return append(b, '}'), true
	default:
		return nil, false
	}
}

// appendFloat is appendNumber of a finite float64 as encoding/json writes
// it: json.Marshal writes the shortest decimal that reads back as f, so
// appendNumber parses f itself back, and an integral one below 1e21 (the
// only kind it writes without a point or an exponent) comes out as the
// same digits, whether it reads as an int64 or not.
func appendFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if f == 0 {
			return append(b, '0') // -0 too
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendNumber(b []byte, n json.Number) ([]byte, error) {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.AppendInt(b, i, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("canonical json: number %q out of range", s)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if f == 0 {
			return append(b, '0'), nil // -0 too
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64), nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a canonical JSON string. Invalid UTF-8 bytes are
// replaced by U+FFFD, as encoding/json does.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
