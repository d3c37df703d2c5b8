package schemas

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBadText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, field string
		bad               bool
	}{
		{"clean", `{"memo":"hello","n":1}`, "", false},
		{"escaped backslash is text", `{"memo":"\\u0000"}`, "", false},
		{"NUL escape in a value", `{"memo":"a\u0000b"}`, "memo", true},
		{"NUL escape in a nested value", `{"a":{"b":["x","\u0000"]}}`, "a.b", true},
		{"NUL escape in a key", `{"a\u0000":1}`, "a\x00", true},
		{"invalid UTF-8 in a value", "{\"name\":\"\xff\xfe\"}", "name", true},
		{"invalid UTF-8 after other fields", "{\"a\":1,\"memo\":\"ok\",\"name\":\"x\xc3\"}", "name", true},
		{"invalid UTF-8 in a key", "{\"na\xffme\":\"x\"}", "na\uFFFDme", true},
		{"raw NUL", "{\"memo\":\"a\x00\"}", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			field, bad := BadText([]byte(tt.body))
			if bad != tt.bad || (bad && field != tt.field) {
				t.Fatalf("BadText(%q) = %q, %v; want %q, %v", tt.body, field, bad, tt.field, tt.bad)
			}
		})
	}
}

func FuzzBadText(f *testing.F) {
	for _, s := range []string{`{"memo":"a\u0000b"}`, "{\"name\":\"\xff\"}", `{"a":[1,{"b":"c"}]}`, `{"a":`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		field, bad := BadText(body)
		if bad {
			if field == "" {
				t.Fatalf("bad text without a field in %q", body)
			}
			return
		}
		// Text it lets through is what Postgres stores: valid UTF-8 and, once
		// decoded, no NUL in any string.
		var v any
		if json.Unmarshal(body, &v) != nil {
			return
		}
		if !utf8.Valid(body) || hasNUL(v) {
			t.Fatalf("BadText passed %q", body)
		}
	})
}

func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	}
	return false
}
