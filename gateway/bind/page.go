package bind

import (
	"encoding/base64"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
)

// Page limits of decisions.md.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// Page is a cursor page request: the opaque cursor decoded to the last
// position seen, and a limit clamped to MaxLimit.
type Page struct {
	After string
	Limit int
}

// PageQuery reads `cursor` and `limit` from the query string.
func PageQuery(c *fiber.Ctx) (Page, error) {
	return parsePage(c.Query("limit"), c.Query("cursor"))
}

func parsePage(limit, cursor string) (Page, error) {
	p := Page{Limit: DefaultLimit}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 {
			return p, apierr.Validation(map[string]string{"limit": "must be a positive integer"})
		}
		p.Limit = min(n, MaxLimit)
	}
	if cursor != "" {
		after, err := DecodeCursor(cursor)
		if err != nil {
			return p, err
		}
		p.After = after
	}
	return p, nil
}

// DecodeCursor reads a cursor Cursor made: 400 invalid_cursor for anything
// else, including one that decodes to NUL bytes or invalid UTF-8.
func DecodeCursor(s string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) == 0 || !cleanText(raw) {
		return "", apierr.InvalidCursor()
	}
	return string(raw), nil
}

// Cursor encodes a position as an opaque cursor.
func Cursor(position string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(position))
}

// IDPageQuery is PageQuery for lists paged by record id: a cursor that does
// not hold an id this API issued is 400 invalid_cursor.
func IDPageQuery(c *fiber.Ctx) (Page, error) {
	p, err := PageQuery(c)
	if err != nil {
		return p, err
	}
	if p.After != "" && !schemas.IsID(p.After) {
		return p, apierr.InvalidCursor()
	}
	return p, nil
}
