// Package bind reads request bodies and query parameters into typed values
// and turns every problem into the spec's error: invalid_json,
// content_type_required or validation_failed with the offending fields.
package bind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
)

// JSON decodes the request body into dst. The body must be a JSON object sent
// with Content-Type: application/json. A field of the wrong JSON type is a
// validation failure naming that field; unknown fields are ignored.
func JSON(c *fiber.Ctx, dst any) error {
	if !IsJSON(c.Get(fiber.HeaderContentType)) {
		return apierr.ContentTypeRequired()
	}
	return Decode(c.Body(), dst)
}

// IsJSON reports whether a Content-Type header names JSON.
func IsJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), fiber.MIMEApplicationJSON)
}

// Decode decodes body into dst with the same rules as JSON.
func Decode(body []byte, dst any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return apierr.InvalidJSON("the body is empty")
	}
	if body[0] != '{' {
		if json.Valid(body) {
			return apierr.InvalidJSON("the body must be a JSON object")
		}
		return apierr.InvalidJSON("malformed JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return apierr.Validation(map[string]string{typeErr.Field: "must be " + jsonKind(typeErr.Type.Kind().String())})
		}
		var fieldErr *FieldError
		if errors.As(err, &fieldErr) {
			return apierr.Validation(map[string]string{fieldErr.Field: fieldErr.Reason})
		}
		return apierr.InvalidJSON("malformed JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierr.InvalidJSON("unexpected data after the JSON object")
	}
	return nil
}

// FieldError is returned by custom field decoders to name the field.
type FieldError struct{ Field, Reason string }

func (e *FieldError) Error() string { return fmt.Sprintf("%s %s", e.Field, e.Reason) }

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}
