package apierr

import (
	"testing"

	"github.com/fintech/platform/schemas"
)

// TestBodyIsErrorJSON pins the one error encoder: an API error's body is
// what the consumers' schemas.ErrorJSON writes for the same code, message,
// fields and extra, byte for byte.
func TestBodyIsErrorJSON(t *testing.T) {
	t.Parallel()
	fields := map[string]string{"amount": "must be positive"}
	tests := []struct {
		name string
		err  *Error
		want []byte
	}{
		{"plain", NotFound("no such wallet"), schemas.ErrorJSON(CodeNotFound, "no such wallet", nil)},
		{"fields", Validation(fields), schemas.ErrorJSON(CodeValidationFailed, "some fields are missing or invalid",
			map[string]any{"fields": fields})},
		{"extra", Internal().With(map[string]any{"requestId": "r1"}),
			schemas.ErrorJSON(CodeInternal, "internal error", map[string]any{"requestId": "r1"})},
		{"fields and extra", Validation(fields).With(map[string]any{"hint": "x"}),
			schemas.ErrorJSON(CodeValidationFailed, "some fields are missing or invalid",
				map[string]any{"fields": fields, "hint": "x"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Body(); string(got) != string(tt.want) {
				t.Fatalf("Body() = %s, want %s", got, tt.want)
			}
		})
	}
	if got := string(Validation(fields).Body()); got != `{"error":"validation_failed","fields":{"amount":"must be positive"},"message":"some fields are missing or invalid"}` {
		t.Fatalf("validation body changed: %s", got)
	}
}
