package bind

import (
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/fintech/platform/gateway/apierr"
)

// Lenient is a field type that decodes any JSON value and keeps what is
// wrong with it (Amount): Present reports whether the field was sent, and
// Invalid says why its value is refused ("" when it is not).
type Lenient interface {
	Present() bool
	Invalid() string
}

// Numeric is a Lenient field holding a number, whose declared minimum and
// maximum the binder checks once it is present and valid.
type Numeric interface {
	Lenient
	Number() float64
}

// Present reports whether the amount was sent.
func (a Amount) Present() bool { return a.Set }

// Invalid says what is wrong with the amount, "" when nothing is.
func (a Amount) Invalid() string { return a.Problem }

// rule holds the declared bounds of one request field: the struct tags the
// API document is reflected from (required, minLength, maxLength, pattern,
// enum, format, minimum, maximum, minItems, maxItems) are the rules the
// binder enforces, so the document and the checks cannot drift. A field
// left out decodes to its zero value, which counts as absent: the bounds of
// an optional field apply only to a value that was sent.
//
// Two kinds of declaration describe a value without refusing it:
//   - format "ksuid": an id that names nothing, well-formed or not, is the
//     resource's 404 (decisions.md), never a 422;
//   - header parameters: they are credentials (X-API-Key, signatures), whose
//     absence or malformation is the route's 401.
type rule struct {
	index    []int
	field    string // as the client names it: the JSON key or parameter name
	query    bool   // a query parameter, whose presence the request tells
	required bool
	minLen   int // -1: none
	maxLen   int
	pattern  *regexp.Regexp
	enum     []string
	format   string
	minimum  *float64
	maximum  *float64
	minItems int
	maxItems int
	nested   []rule // the fields of a struct (or of each element of a slice of structs)
	lenient  bool   // the field's type is Lenient
}

func (r rule) lenientValue(v reflect.Value) (Lenient, bool) {
	if !r.lenient || v.Kind() == reflect.Pointer {
		return nil, false // a pointer is checked for nil, then its value
	}
	l, ok := v.Interface().(Lenient)
	return l, ok
}

var lenientType = reflect.TypeFor[Lenient]()

// rulesOf reads the rules of t's fields (through embedded structs, into
// nested structs and slices of structs). Path and query parameters are
// named by their tags, body fields by their JSON names; body fields only
// when the binder decodes the body (a RawBody type's handler reads and
// checks its body itself, after its signature).
func rulesOf(t reflect.Type, prefix []int, body bool) ([]rule, error) {
	var out []rule
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			inner, err := rulesOf(f.Type, index, body)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		if !f.IsExported() || f.Tag.Get("header") != "" {
			continue
		}
		name, query := f.Tag.Get("path"), false
		if name == "" {
			name = f.Tag.Get("query")
			query = name != ""
		}
		if name == "" && body {
			name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		}
		if name == "" || name == "-" {
			continue
		}
		r, err := fieldRule(t, f, index, name)
		if err != nil {
			return nil, err
		}
		if r != nil {
			r.query = query
			out = append(out, *r)
		}
	}
	return out, nil
}

func fieldRule(t reflect.Type, f reflect.StructField, index []int, name string) (*rule, error) {
	r := rule{index: index, field: name, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1,
		required: f.Tag.Get("required") == "true"}
	declared := r.required
	intTag := func(tag string, dst *int) error {
		if v := f.Tag.Get(tag); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("bind: %s.%s: bad %s %q", t, f.Name, tag, v)
			}
			*dst, declared = n, true
		}
		return nil
	}
	for tag, dst := range map[string]*int{"minLength": &r.minLen, "maxLength": &r.maxLen, "minItems": &r.minItems, "maxItems": &r.maxItems} {
		if err := intTag(tag, dst); err != nil {
			return nil, err
		}
	}
	for tag, dst := range map[string]**float64{"minimum": &r.minimum, "maximum": &r.maximum} {
		if v := f.Tag.Get(tag); v != "" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("bind: %s.%s: bad %s %q", t, f.Name, tag, v)
			}
			*dst, declared = &x, true
		}
	}
	if p := f.Tag.Get("pattern"); p != "" {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bind: %s.%s: bad pattern: %w", t, f.Name, err)
		}
		r.pattern, declared = re, true
	}
	if e := f.Tag.Get("enum"); e != "" {
		r.enum, declared = strings.Split(e, ","), true
	}
	switch fm := f.Tag.Get("format"); fm {
	case "email", "date-time", "uri":
		r.format, declared = fm, true
	}
	if t := f.Type; t.Implements(lenientType) || (t.Kind() == reflect.Pointer && t.Elem().Implements(lenientType)) {
		r.lenient = true
		declared = true // it may refuse its value whatever its tags say
	}
	elem := f.Type
	for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
		elem = elem.Elem()
	}
	if elem.Kind() == reflect.Struct && !elem.Implements(lenientType) && elem != reflect.TypeFor[time.Time]() {
		nested, err := rulesOf(elem, nil, true)
		if err != nil {
			return nil, err
		}
		r.nested = nested
		declared = declared || len(nested) > 0
	}
	if !declared {
		return nil, nil
	}
	return &r, nil
}

// checkRules checks v against rules, recording problems in p. A query
// parameter that was sent is checked even when it parsed to zero (limit=0);
// q is nil outside a request (a body decoded on its own).
func checkRules(v reflect.Value, rules []rule, prefix string, q *fasthttp.Args, p *Validator) {
	for _, r := range rules {
		f := v.FieldByIndex(r.index)
		if r.query && q != nil && q.Has(r.field) && f.IsZero() && f.Kind() != reflect.String {
			r.checkNumber(0, false, prefix+r.field, p)
			continue
		}
		r.check(f, prefix+r.field, p)
	}
}

func (r rule) check(v reflect.Value, field string, p *Validator) {
	// Known when the rule was read: boxing every field to ask would cost an
	// allocation per field per request.
	if l, ok := r.lenientValue(v); ok {
		switch {
		case !l.Present():
			if r.required {
				p.Fail(field, "is required")
			}
		case l.Invalid() != "":
			p.Fail(field, l.Invalid())
		default:
			if n, ok := l.(Numeric); ok {
				r.checkNumber(n.Number(), false, field, p)
			}
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			if r.required {
				p.Fail(field, "is required")
			}
			return
		}
		// A pointer field is present when sent, whatever its value: an
		// empty string there is an answer the handler gives (sign's verify
		// of "" is "not valid"), not a missing field.
		// A number behind a pointer was sent, zero included.
		switch e := v.Elem(); e.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			r.checkNumber(float64(e.Int()), false, field, p)
		case reflect.Float32, reflect.Float64:
			r.checkNumber(e.Float(), false, field, p)
		default:
			inner := r
			inner.required = false
			inner.check(e, field, p)
		}
	case reflect.String:
		r.checkString(v.String(), field, p)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		r.checkNumber(float64(v.Int()), v.IsZero(), field, p)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		r.checkNumber(float64(v.Uint()), v.IsZero(), field, p)
	case reflect.Float32, reflect.Float64:
		r.checkNumber(v.Float(), v.IsZero(), field, p)
	case reflect.Slice:
		if v.IsNil() {
			if r.required {
				p.Fail(field, "is required")
			}
			return
		}
		if r.minItems >= 0 && v.Len() < r.minItems {
			p.Fail(field, "must have at least "+strconv.Itoa(r.minItems)+" items")
		}
		if r.maxItems >= 0 && v.Len() > r.maxItems {
			p.Fail(field, "must have at most "+strconv.Itoa(r.maxItems)+" items")
		}
		for i := 0; i < v.Len() && len(r.nested) > 0; i++ {
			el := v.Index(i)
			for el.Kind() == reflect.Pointer && !el.IsNil() {
				el = el.Elem()
			}
			if el.Kind() == reflect.Struct {
				checkRules(el, r.nested, field+"["+strconv.Itoa(i)+"].", nil, p)
			}
		}
	case reflect.Struct:
		checkRules(v, r.nested, field+".", nil, p)
	}
}

// checkString checks s without its surrounding spaces, which the handlers
// trim before they use a value.
func (r rule) checkString(s, field string, p *Validator) {
	s = strings.TrimSpace(s)
	if s == "" {
		if r.required {
			p.Fail(field, "is required")
		}
		return
	}
	n := utf8.RuneCountInString(s)
	switch {
	case r.minLen >= 0 && n < r.minLen:
		p.Fail(field, "must be at least "+strconv.Itoa(r.minLen)+" characters")
	case r.maxLen >= 0 && n > r.maxLen:
		p.Fail(field, "must be at most "+strconv.Itoa(r.maxLen)+" characters")
	case len(r.enum) > 0 && !slices.Contains(r.enum, s):
		p.Fail(field, "must be one of "+strings.Join(r.enum, ", "))
	case r.pattern != nil && !r.pattern.MatchString(s):
		p.Fail(field, "must match "+r.pattern.String())
	case r.format != "" && !formatOK(r.format, s):
		p.Fail(field, formatReason[r.format])
	}
}

func (r rule) checkNumber(x float64, zero bool, field string, p *Validator) {
	if zero && !r.required {
		return // left out
	}
	switch {
	case r.minimum != nil && x < *r.minimum:
		p.Fail(field, "must be at least "+formatBound(*r.minimum))
	case r.maximum != nil && x > *r.maximum:
		p.Fail(field, "must be at most "+formatBound(*r.maximum))
	}
}

func formatBound(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

var formatReason = map[string]string{
	"email":     "must be an e-mail address",
	"date-time": "must be an RFC 3339 date-time such as 2025-06-01T12:00:00Z",
	"uri":       "must be an absolute URL",
}

func formatOK(format, s string) bool {
	switch format {
	case "email":
		addr, err := mail.ParseAddress(s)
		return err == nil && addr.Address == s && len(s) <= 254 && strings.Contains(s[strings.LastIndex(s, "@")+1:], ".")
	case "date-time":
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.IsAbs() && u.Host != ""
	}
	return true
}

// Check enforces the declared rules of b's type on dst after Bind bound c
// into it (c may be nil for a body decoded on its own): one 422
// validation_failed naming every field that breaks its bounds.
func (b *Binder) Check(c *fiber.Ctx, dst any) error {
	if len(b.rules) == 0 {
		return nil
	}
	var q *fasthttp.Args
	if c != nil {
		q = c.Request().URI().QueryArgs()
	}
	var p Validator
	checkRules(reflect.ValueOf(dst).Elem(), b.rules, "", q, &p)
	return p.Err()
}

// Merge joins two validation failures into one answer naming the fields of
// both (the first reason per field wins); any other error is returned as is.
func Merge(first, second error) error {
	if first == nil {
		return second
	}
	if second == nil {
		return first
	}
	var a, b *apierr.Error
	okA, okB := errors.As(first, &a), errors.As(second, &b)
	if !okA || !okB || a.Code != apierr.CodeValidationFailed || b.Code != apierr.CodeValidationFailed {
		return first
	}
	var p Validator
	for k, v := range a.Fields {
		p.Fail(k, v)
	}
	for k, v := range b.Fields {
		p.Fail(k, v)
	}
	return p.Err()
}

// DecodeChecked decodes a JSON body into dst, a pointer to a request type,
// and checks the type's declared rules on it, as the server does before the
// type's own Validate (unit tests of a request's checks use it).
func DecodeChecked(body []byte, dst any) error {
	if err := Decode(body, dst); err != nil {
		return err
	}
	b, err := For(reflect.TypeOf(dst).Elem())
	if err != nil {
		return err
	}
	return b.Check(nil, dst)
}

// CheckRules checks the declared rules of dst, a pointer to a request type
// already filled in, as the server does after binding.
func CheckRules(dst any) error {
	b, err := For(reflect.TypeOf(dst).Elem())
	if err != nil {
		return err
	}
	return b.Check(nil, dst)
}
