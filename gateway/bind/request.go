package bind

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
)

// OptionalBody is a request type whose JSON body may be left out entirely.
type OptionalBody interface{ BodyIsOptional() }

// RawBody is a request type whose body the handler reads itself, byte for
// byte (a signed payload whose signature is checked before it is parsed):
// Request binds only its parameters, and the document still describes the
// body from the type's json fields.
type RawBody interface{ BodyIsRaw() }

// Binder binds the requests of one declared type: where its parameters
// are and whether it has a body are read from the type once (For), not on
// every request.
type Binder struct {
	typ      reflect.Type
	body     bool // JSON body fields, and not RawBody
	optional bool // OptionalBody
	params   []param
	rules    []rule // the declared bounds, enforced by Check
}

// param is one `path:`, `query:` or `header:` field, by its index path
// (through embedded structs).
type param struct {
	index []int
	in    string // "path", "query" or "header"
	name  string
}

// For builds the binder of t, a struct type declared for an operation:
// fields tagged `path:"name"`, `query:"name"` and `header:"Name"` take
// those parameters (string kinds as they are, integer and boolean kinds
// parsed, a bad one is 422 naming the parameter), and when the struct has
// `json:` fields the body is decoded with JSON's rules (Content-Type,
// object, typed fields; undeclared fields are ignored). Embedded structs
// are bound the same way. A field of another kind is a declaration error.
func For(t reflect.Type) (*Binder, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("bind: %s is not a struct", t)
	}
	ptr := reflect.PointerTo(t)
	b := &Binder{typ: t, body: hasBody(t) && !ptr.Implements(reflect.TypeFor[RawBody]()),
		optional: ptr.Implements(reflect.TypeFor[OptionalBody]())}
	if err := b.collect(t, nil); err != nil {
		return nil, err
	}
	rules, err := rulesOf(t, nil, b.body)
	if err != nil {
		return nil, err
	}
	b.rules = rules
	return b, nil
}

func (b *Binder) collect(t reflect.Type, prefix []int) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := b.collect(f.Type, index); err != nil {
				return err
			}
			continue
		}
		for _, in := range []string{"path", "query", "header"} {
			if name := f.Tag.Get(in); name != "" {
				switch f.Type.Kind() {
				case reflect.String, reflect.Int, reflect.Int32, reflect.Int64, reflect.Bool:
				default:
					return fmt.Errorf("bind: %s parameter %s has unsupported kind %s", t, name, f.Type.Kind())
				}
				b.params = append(b.params, param{index: index, in: in, name: name})
				break
			}
		}
	}
	return nil
}

// Bind binds the request into dst, a pointer to the binder's type.
func (b *Binder) Bind(c *fiber.Ctx, dst any) error {
	v := reflect.ValueOf(dst).Elem()
	if v.Type() != b.typ {
		return fmt.Errorf("bind: %T is not a *%s", dst, b.typ)
	}
	if b.body && (!b.optional || len(bytes.TrimSpace(c.Body())) > 0) {
		if err := JSON(c, dst); err != nil {
			return err
		}
	}
	for _, p := range b.params {
		var raw string
		switch p.in {
		case "path":
			raw = c.Params(p.name)
		case "query":
			raw = c.Query(p.name)
		default:
			raw = c.Get(p.name)
		}
		if err := setParam(v.FieldByIndex(p.index), p.name, strings.Clone(raw)); err != nil {
			return err
		}
	}
	return nil
}

// Request binds a request into dst, a pointer to a struct declared for an
// operation, as For(its type).Bind does.
func Request(c *fiber.Ctx, dst any) error {
	t := reflect.TypeOf(dst)
	if t.Kind() != reflect.Pointer {
		return fmt.Errorf("bind.Request: %T is not a pointer to a struct", dst)
	}
	b, err := For(t.Elem())
	if err != nil {
		return err
	}
	return b.Bind(c, dst)
}

// hasBody reports whether t declares JSON body fields.
func hasBody(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			if hasBody(f.Type) {
				return true
			}
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "-" && f.Tag.Get("json") != "" {
			return true
		}
	}
	return false
}

func setParam(field reflect.Value, name, raw string) error {
	switch field.Kind() {
	case reflect.String:
		field.SetString(raw)
	case reflect.Int, reflect.Int32, reflect.Int64:
		if raw == "" {
			return nil
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || field.OverflowInt(n) {
			return apierr.Validation(map[string]string{name: "must be an integer"})
		}
		field.SetInt(n)
	case reflect.Bool:
		if raw == "" {
			return nil
		}
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return apierr.Validation(map[string]string{name: "must be true or false"})
		}
		field.SetBool(b)
	}
	return nil
}

// Paging is the cursor and limit of a list request; embed it in the list's
// request type. Validate reads both as PageQuery does; a request type with
// its own Validate calls it.
type Paging struct {
	Cursor string `query:"cursor" json:"-" description:"the nextCursor of the previous page"`
	Limit  Limit  `query:"limit" json:"-"`
	page   Page
}

// Limit is the page size a client asks for: a positive integer, clamped to
// MaxLimit; DefaultLimit when absent.
type Limit string

// PrepareJSONSchema describes a limit as the integer it is.
func (Limit) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithType(jsonschema.Integer.Type()).WithMinimum(1).WithDefault(DefaultLimit).
		WithDescription(fmt.Sprintf("page size; larger values are clamped to %d", MaxLimit))
	return nil
}

// Validate parses the cursor and limit.
func (p *Paging) Validate() error {
	page, err := parsePage(string(p.Limit), p.Cursor)
	p.page = page
	return err
}

// Page is the parsed page request (after Validate).
func (p *Paging) Page() Page { return p.page }

// IDPaging is Paging for lists paged by record id: a cursor that does not
// hold an id this API issued is 400 invalid_cursor.
type IDPaging struct{ Paging }

// Validate parses the cursor and limit and checks the cursor holds an id.
func (p *IDPaging) Validate() error {
	if err := p.Paging.Validate(); err != nil {
		return err
	}
	if p.page.After != "" && !schemas.IsID(p.page.After) {
		return apierr.InvalidCursor()
	}
	return nil
}

// PageOf builds the page answer of rows fetched with limit+1: at most limit
// items, and the cursor of the last one when more remain.
func PageOf[R, T any](rows []R, limit int, position func(R) string, view func(R) T) schemas.Page[T] {
	out := schemas.Page[T]{Items: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		next := Cursor(position(rows[len(rows)-1]))
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, view(r))
	}
	return out
}
