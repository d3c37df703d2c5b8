package bind

import (
	"bytes"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
)

// cleanText reports whether s is valid UTF-8 without NUL characters, the
// only text the platform stores: Postgres refuses NUL in text and invalid
// UTF-8 everywhere.
func cleanText(s []byte) bool { return utf8.Valid(s) && bytes.IndexByte(s, 0) < 0 }

const badTextReason = "must be valid UTF-8 text without NUL characters"

// CheckText refuses a request carrying NUL bytes or invalid UTF-8 in a
// header, a path parameter, a query value or a JSON string: 422
// validation_failed naming the field (400 invalid_cursor for `cursor`). It
// runs once at the edge for every route, before any handler, so no such byte
// reaches storage or a command topic.
func CheckText(c *fiber.Ctx) error {
	if err := checkText(c); err != nil {
		return err
	}
	return c.Next()
}

func checkText(c *fiber.Ctx) error {
	var bad error
	c.Request().Header.VisitAll(func(k, v []byte) {
		if bad == nil && !cleanText(v) {
			bad = apierr.Validation(map[string]string{string(k): badTextReason})
		}
	})
	if bad != nil {
		return bad
	}
	for _, name := range c.Route().Params {
		raw := c.Params(name)
		dec, err := url.PathUnescape(raw)
		if !cleanText([]byte(raw)) || err != nil || !cleanText([]byte(dec)) {
			return apierr.Validation(map[string]string{name: badTextReason})
		}
	}
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) {
		if bad != nil || (cleanText(k) && cleanText(v)) {
			return
		}
		if string(k) == "cursor" {
			bad = apierr.InvalidCursor()
			return
		}
		bad = apierr.Validation(map[string]string{strings.ToValidUTF8(string(k), "\uFFFD"): badTextReason})
	})
	if bad != nil {
		return bad
	}
	if body := c.Body(); len(body) > 0 && IsJSON(c.Get(fiber.HeaderContentType)) {
		if field, ok := schemas.BadText(body); ok {
			return apierr.Validation(map[string]string{field: badTextReason})
		}
	}
	return nil
}
