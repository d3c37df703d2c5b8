package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// BadText is the one check, shared by the gateway's edge and the consumers,
// for text the platform refuses to store: NUL characters and invalid UTF-8.
// BadText finds the first JSON string (key or value) holding a NUL
// character or invalid UTF-8 and returns the field it belongs to (dotted
// path, "body" at the top level). Well-formed text costs one scan.
func BadText(body []byte) (string, bool) {
	invalidAt := -1
	if !utf8.Valid(body) {
		for i := 0; i < len(body); {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				invalidAt = i
				break
			}
			i += n
		}
	}
	if invalidAt < 0 && bytes.IndexByte(body, 0) < 0 && !bytes.Contains(body, []byte(`\u0000`)) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var path []string   // keys of the open objects ("" for arrays)
	var inObject []bool // per open container: object (true) or array
	expectKey := false
	field := func() string {
		parts := withoutEmpty(path)
		if len(parts) == 0 {
			return "body"
		}
		return strings.Join(parts, ".")
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// Malformed JSON: the decoder answers invalid_json later, unless
			// the bad bytes come first.
			if invalidAt >= 0 {
				return field(), true
			}
			return "", false
		}
		if invalidAt >= 0 && dec.InputOffset() > int64(invalidAt) {
			if s, ok := tok.(string); ok && expectKey {
				return strings.Join(append(withoutEmpty(path), strings.ToValidUTF8(s, "\uFFFD")), "."), true
			}
			return field(), true
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				inObject = append(inObject, true)
				path = append(path, "")
				expectKey = true
				continue
			case '[':
				inObject = append(inObject, false)
				path = append(path, "")
			case '}', ']':
				inObject = inObject[:len(inObject)-1]
				path = path[:len(path)-1]
			}
		case string:
			if expectKey {
				path[len(path)-1] = v
				if strings.IndexByte(v, 0) >= 0 {
					return field(), true
				}
				expectKey = false
				continue
			}
			if strings.IndexByte(v, 0) >= 0 {
				return field(), true
			}
		}
		expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
	if invalidAt >= 0 {
		return "body", true
	}
	return "", false
}

func withoutEmpty(path []string) []string {
	var out []string
	for _, p := range path {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
