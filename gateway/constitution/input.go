package constitution

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// Limits of the module's strings and lists (schemas/constitution.go).
const (
	maxTags       = schemas.MaxTags
	maxTagLen     = schemas.MaxTagLen
	maxCommentLen = schemas.MaxCommentLen
)

// sliderInput is a sliders object as sent: kept raw so that every slider can
// be checked (missing, unknown, fractional, string, out of range) with its
// own field name.
type sliderInput map[string]json.RawMessage

// PrepareJSONSchema describes a sliders object as parseSliders accepts it:
// the eight sliders, each an integer 0..100, and nothing else.
func (sliderInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	props := make(map[string]jsonschema.SchemaOrBool, len(schemas.SliderKeys))
	for _, k := range schemas.SliderKeys {
		props[k] = (&jsonschema.Schema{}).WithType(jsonschema.Integer.Type()).WithMinimum(0).WithMaximum(100).ToSchemaOrBool()
	}
	s.WithType(jsonschema.Object.Type()).WithProperties(props).WithRequired(schemas.SliderKeys...).
		WithAdditionalProperties(jsonschema.SchemaOrBool{TypeBoolean: new(bool)}).
		WithDescription("all eight sliders, each an integer from 0 to 100")
	return nil
}

// ignored is a body field the spec lists but the server does not read (it
// computes the value itself): any JSON value is accepted and dropped.
type ignored struct{}

// UnmarshalJSON accepts any value.
func (*ignored) UnmarshalJSON([]byte) error { return nil }

// PrepareJSONSchema describes the field as any value, ignored.
func (ignored) PrepareJSONSchema(s *jsonschema.Schema) error {
	*s = jsonschema.Schema{}
	s.WithDescription("ignored: computed by the server from the sliders")
	return nil
}

// parseSliders checks a sliders object (all eight integer sliders 0..100,
// nothing else) and reports each problem under "<field>.<slider>"; a missing
// object is reported under field.
func parseSliders(v *bind.Validator, field string, in sliderInput) schemas.Sliders {
	if in == nil {
		v.Fail(field, "is required: an object with the eight integer sliders "+strings.Join(schemas.SliderKeys, ", "))
		return schemas.Sliders{}
	}
	var vals [8]int
	for i, k := range schemas.SliderKeys {
		raw, ok := in[k]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			v.Fail(field+"."+k, "is required")
			continue
		}
		n, problem := sliderValue(raw)
		if problem != "" {
			v.Fail(field+"."+k, problem)
			continue
		}
		vals[i] = n
	}
	for k := range in {
		if sliderIndex(k) < 0 {
			v.Fail(field+"."+safeKey(k), "is not a slider; the sliders are "+strings.Join(schemas.SliderKeys, ", "))
		}
	}
	return schemas.SlidersFrom(vals)
}

// safeKey makes a client-sent key printable in an error report.
func safeKey(k string) string {
	if !utf8.ValidString(k) || strings.ContainsRune(k, 0) {
		return "(invalid)"
	}
	if utf8.RuneCountInString(k) > 40 {
		return string([]rune(k)[:40])
	}
	return k
}

func sliderValue(raw json.RawMessage) (int, string) {
	s := string(bytes.TrimSpace(raw))
	const want = "must be an integer from 0 to 100"
	if s == "" || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return 0, want
	}
	if strings.ContainsAny(s, ".eE") {
		return 0, want + ", not a fraction"
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 100 {
		return 0, want
	}
	return n, ""
}

// cleanText trims s and checks it is valid UTF-8 without NUL bytes, at
// most max characters, and (when required) not empty.
func cleanText(v *bind.Validator, field, s string, max int, required bool) string {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		v.Fail(field, "must be valid UTF-8 text without NUL bytes")
		return ""
	}
	s = strings.TrimSpace(s)
	if required {
		v.Required(field, s)
	}
	v.MaxLen(field, s, max)
	return s
}

// cleanTags trims and de-duplicates tags: at most 20, each 1–50 characters.
func cleanTags(v *bind.Validator, tags []string) []string {
	out := []string{}
	if len(tags) > maxTags {
		v.Fail("tags", "must have at most 20 tags")
		return out
	}
	seen := map[string]bool{}
	for i, t := range tags {
		f := "tags[" + strconv.Itoa(i) + "]"
		t = cleanText(v, f, t, maxTagLen, true)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
