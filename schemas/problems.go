package schemas

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FieldProblems is what is wrong with a command or a request, by field (the
// first problem per field). A command's Validate returns it; as an error it
// is answered 422 validation_failed with these fields by the gateway's one
// error handler and by a consumer (pipeline.Invalid) alike.
type FieldProblems map[string]string

// Error lists the problems, sorted by field.
func (p FieldProblems) Error() string {
	fields := make([]string, 0, len(p))
	for f := range p {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f + " " + p[f])
	}
	return b.String()
}

// Check records reason for field when ok is false.
func (p FieldProblems) Check(ok bool, field, reason string) {
	if _, seen := p[field]; !ok && !seen {
		p[field] = reason
	}
}

// MaxLen records a string longer than max characters.
func (p FieldProblems) MaxLen(field, value string, max int) {
	// The reason is built only when it is recorded: every command and
	// request checks several lengths, and almost all of them pass.
	if utf8.RuneCountInString(value) > max {
		p.Check(false, field, "must be at most "+strconv.Itoa(max)+" characters")
	}
}

// Required records an empty (after trimming) string and reports whether it
// was there.
func (p FieldProblems) Required(field, value string) bool {
	ok := strings.TrimSpace(value) != ""
	p.Check(ok, field, "is required")
	return ok
}

// Err returns p as an error, or nil when there is no problem.
func (p FieldProblems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return p
}
