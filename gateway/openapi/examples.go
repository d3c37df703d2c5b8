package openapi

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"
)

// AddExamples gives the leaf schemas of doc (component schemas, parameters,
// request and response bodies) an example derived from their declaration,
// where Redoc's sampler would otherwise show a placeholder: a pattern (a
// ksuid, a key prefix, a hash), a length floor ("stringstring…"), a format
// (date-time, e-mail, URI) or a field whose name says what it holds (an
// amount in integer minor units, a currency, an e-mail). A schema that
// already has an example, an enum (the sampler shows its first value) or no
// such hint is left alone. Every example satisfies its schema's pattern,
// length and bounds; a candidate that does not is dropped.
func AddExamples(doc map[string]any) {
	var walk func(v any, name string)
	walk = func(v any, name string) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["type"].(string); ok {
				if _, has := x["example"]; !has && x["enum"] == nil {
					if ex, ok := exampleOf(x, name); ok {
						x["example"] = ex
					}
				}
			}
			for k, e := range x {
				switch k {
				case "properties":
					for prop, s := range asMap(e) {
						walk(s, prop)
					}
				case "parameters":
					for _, p := range asAnyList(e) {
						pm := asMap(p)
						n, _ := pm["name"].(string)
						walk(pm["schema"], n)
					}
				case "example", "examples", "enum", "x-codeSamples":
				default:
					walk(e, name)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, name)
			}
		}
	}
	walk(doc["paths"], "")
	walk(asMap(doc["components"])["schemas"], "")
}

// PlaceholderSchemas lists where in doc a string schema has a pattern or a
// minLength over 6 but no example and no enum: Redoc's sampler would show
// "stringstring…" or a text the pattern refuses there.
func PlaceholderSchemas(doc map[string]any) []string {
	var out []string
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			_, example := x["example"]
			_, pattern := x["pattern"]
			if x["type"] == "string" && !example && x["enum"] == nil && (pattern || intOf(x["minLength"]) > len("string")) {
				out = append(out, at)
			}
			for k, e := range x {
				if k != "example" && k != "x-codeSamples" {
					walk(e, at+"/"+k)
				}
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
	sort.Strings(out)
	return out
}

// Example values of the platform's vocabulary.
const (
	ExampleTime     = "2026-11-27T09:30:00Z"
	ExampleEmail    = "ada@example.com"
	ExampleURL      = "https://shop.example.com/webhooks/platform"
	ExampleCurrency = "KZT"
	// ExampleAmount is 25.00 in minor units.
	ExampleAmount = 2500
)

// moneyName matches the field names of amounts in minor units.
var moneyName = regexp.MustCompile(`(?i)(amount|balance|fee|kzt|minor|cents|price|goal|raised|paid|refund|salary|prize|limit$)`)

// exampleOf is the example of one leaf schema named name (a property or
// parameter name; "" when unnamed), and whether it has one.
func exampleOf(s map[string]any, name string) (any, bool) {
	lower := strings.ToLower(name)
	switch s["type"] {
	case "string":
		var candidates []string
		format, _ := s["format"].(string)
		switch {
		case format == "binary" || format == "byte":
			return nil, false
		case format == "date-time":
			candidates = append(candidates, ExampleTime)
		case format == "date":
			candidates = append(candidates, ExampleTime[:10])
		case format == "email" || strings.HasSuffix(lower, "email"):
			candidates = append(candidates, ExampleEmail)
		case format == "uri" || format == "url" || lower == "url" || strings.HasSuffix(lower, "url"):
			candidates = append(candidates, ExampleURL)
		case strings.HasSuffix(lower, "currency"):
			candidates = append(candidates, ExampleCurrency)
		case lower == "idempotency-key":
			candidates = append(candidates, "3f1c2a9e-7b4d-4e1a-9c55-0d2f6b8a1e47")
		case strings.Contains(lower, "password"):
			candidates = append(candidates, "correct-horse-battery-7")
		case lower == "city":
			candidates = append(candidates, "Almaty")
		case lower == "title":
			candidates = append(candidates, "Fund the community library")
		case lower == "memo" || lower == "note":
			candidates = append(candidates, "Dinner on Friday")
		case lower == "reason":
			candidates = append(candidates, "Requested by the customer")
		case lower == "description":
			candidates = append(candidates, "A short description")
		case lower == "name":
			candidates = append(candidates, "Example name")
		case lower == "fullname" || lower == "ownername":
			candidates = append(candidates, "Ada Lovelace")
		}
		if name == "id" || strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID") {
			// an id the platform minted, declared without its format
			if gen, ok := fromPattern(KSUID["pattern"].(string), name); ok {
				candidates = append(candidates, gen)
			}
		}
		if p, ok := s["pattern"].(string); ok {
			if gen, ok := fromPattern(p, name); ok {
				candidates = append(candidates, gen)
			}
		}
		if min := intOf(s["minLength"]); min > len("string") {
			// A free text with a length floor: the sampler would repeat
			// "string" up to it.
			candidates = append(candidates, fill(name, min))
		}
		for _, c := range candidates {
			if fitsString(s, c) {
				return c, true
			}
		}
	case "integer":
		if moneyName.MatchString(name) && !strings.Contains(lower, "count") {
			v := int64(ExampleAmount)
			if strings.HasSuffix(lower, "limit") && !strings.Contains(lower, "cents") {
				v = 20 // a page or quota limit, not money
			}
			if fitsNumber(s, v) {
				return v, true
			}
		}
	}
	return nil, false
}

// fill is a readable free text of exactly n characters.
func fill(name string, n int) string {
	base := "example-" + strings.ToLower(name)
	if name == "" {
		base = "example-text"
	}
	for len(base) < n {
		base += "-" + base
	}
	return strings.TrimSuffix(base[:n], "-") + strings.Repeat("x", len(base[:n])-len(strings.TrimSuffix(base[:n], "-")))
}

func fitsString(s map[string]any, v string) bool {
	n := utf8.RuneCountInString(v)
	if min, ok := s["minLength"]; ok && n < intOf(min) {
		return false
	}
	if max, ok := s["maxLength"]; ok && n > intOf(max) {
		return false
	}
	if p, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil || !re.MatchString(v) {
			return false
		}
	}
	return true
}

func fitsNumber(s map[string]any, v int64) bool {
	if min, ok := s["minimum"]; ok && float64(v) < floatOf(min) {
		return false
	}
	if max, ok := s["maximum"]; ok && float64(v) > floatOf(max) {
		return false
	}
	return true
}

func intOf(v any) int {
	return int(floatOf(v))
}

func floatOf(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case uint64:
		return float64(n)
	}
	return 0
}

// fromPattern generates a string the pattern matches: literals as written,
// each character class drawn from with a generator seeded by name (so a
// ksuid looks like one, and the same field gets the same example), the
// least repetition a quantifier allows (at least one). Alternations take
// their first branch.
func fromPattern(pattern, name string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name + pattern))
	seed := h.Sum64()
	next := func() uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	var b strings.Builder
	var gen func(r *syntax.Regexp) bool
	gen = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			var runes []rune
			for i := 0; i+1 < len(r.Rune); i += 2 {
				for c := r.Rune[i]; c <= r.Rune[i+1] && len(runes) < 256; c++ {
					runes = append(runes, c)
				}
			}
			if len(runes) == 0 {
				return false
			}
			b.WriteRune(runes[next()%uint64(len(runes))])
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('x')
		case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpEmptyMatch:
		case syntax.OpCapture, syntax.OpConcat:
			for _, s := range r.Sub {
				if !gen(s) {
					return false
				}
			}
		case syntax.OpAlternate:
			return gen(r.Sub[0])
		case syntax.OpStar, syntax.OpQuest:
			return true
		case syntax.OpPlus:
			return gen(r.Sub[0])
		case syntax.OpRepeat:
			n := r.Min
			if n < 1 {
				n = 1
			}
			if r.Max >= 0 && n > r.Max {
				n = r.Max
			}
			for i := 0; i < n; i++ {
				if !gen(r.Sub[0]) {
					return false
				}
			}
		default:
			return false
		}
		return true
	}
	if !gen(re) {
		return "", false
	}
	out := b.String()
	if ok, _ := regexp.MatchString(pattern, out); !ok {
		return "", false
	}
	return out, true
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
