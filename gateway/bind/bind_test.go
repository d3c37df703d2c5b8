package bind

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fintech/platform/gateway/apierr"
)

func TestAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		json    string
		want    int64
		set     bool
		problem bool
	}{
		{"positive", `1`, 1, true, false},
		{"max", `1000000000000000`, MaxAmount, true, false},
		{"over max", `1000000000000001`, 0, true, true},
		{"over int64", `99999999999999999999`, 0, true, true},
		{"zero", `0`, 0, true, true},
		{"negative", `-5`, 0, true, true},
		{"fraction", `10.5`, 0, true, true},
		{"integral fraction", `10.0`, 0, true, true},
		{"exponent", `1e3`, 0, true, true},
		{"string", `"100"`, 0, true, true},
		{"bool", `true`, 0, true, true},
		{"object", `{}`, 0, true, true},
		{"null", `null`, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v struct {
				A Amount `json:"a"`
			}
			if err := json.Unmarshal([]byte(`{"a":`+tt.json+`}`), &v); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if v.A.Value != tt.want || v.A.Set != tt.set || (v.A.Problem != "") != tt.problem {
				t.Fatalf("got %+v", v.A)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	type req struct {
		Name   string `json:"name"`
		Amount Amount `json:"amount"`
	}
	tests := []struct {
		name  string
		body  string
		code  string
		field string
	}{
		{"ok", `{"name":"x","amount":5}`, "", ""},
		{"empty", ``, apierr.CodeInvalidJSON, ""},
		{"malformed", `{"name":`, apierr.CodeInvalidJSON, ""},
		{"array", `[1,2]`, apierr.CodeInvalidJSON, ""},
		{"trailing data", `{"name":"x"} {}`, apierr.CodeInvalidJSON, ""},
		{"wrong type", `{"name":5}`, apierr.CodeValidationFailed, "name"},
		{"unknown fields ignored", `{"name":"x","zzz":1}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r req
			err := Decode([]byte(tt.body), &r)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != tt.code {
				t.Fatalf("got %v, want code %s", err, tt.code)
			}
			if tt.field != "" && ae.Fields[tt.field] == "" {
				t.Fatalf("fields %v lack %s", ae.Fields, tt.field)
			}
		})
	}
}

func TestValidator(t *testing.T) {
	t.Parallel()
	var v Validator
	v.Email("email", "not-an-email")
	v.Email("email2", "a@b.co")
	v.Required("name", "  ")
	v.MaxLen("memo", string(make([]rune, 501)), MaxMemo)
	v.Amount("amount", Amount{Set: true, Problem: "must be a positive integer"})
	v.Amount("missing", Amount{})
	v.OneOf("currency", "EUR", "KZT", "USD")
	var ae *apierr.Error
	if !errors.As(v.Err(), &ae) {
		t.Fatal("want a validation error")
	}
	for _, f := range []string{"email", "name", "memo", "amount", "missing", "currency"} {
		if ae.Fields[f] == "" {
			t.Errorf("field %s not reported: %v", f, ae.Fields)
		}
	}
	if _, ok := ae.Fields["email2"]; ok {
		t.Errorf("valid e-mail reported: %v", ae.Fields)
	}
}

// TestAmountOf: a money field with two names takes either one, the same
// value under both, and refuses two different values naming both fields
// (never silently moving one of them) or neither.
func TestAmountOf(t *testing.T) {
	t.Parallel()
	set := func(n int64) Amount { return Amount{Set: true, Value: n} }
	tests := []struct {
		name       string
		a, b       Amount
		want       int64
		wantFields []string
	}{
		{"first name", set(100), Amount{}, 100, nil},
		{"alias", Amount{}, set(200), 200, nil},
		{"both equal", set(300), set(300), 300, nil},
		{"both differ", set(100), set(200), 0, []string{"amount", "amountKzt"}},
		{"neither", Amount{}, Amount{}, 0, []string{"amount"}},
		{"bad alias beside a good amount", set(100), Amount{Set: true, Problem: "must be a positive integer"}, 100, []string{"amountKzt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v Validator
			got := v.AmountOf("amount", tt.a, "amountKzt", tt.b)
			err := v.Err()
			if tt.wantFields == nil {
				if err != nil || got != tt.want {
					t.Fatalf("got %d, %v; want %d", got, err, tt.want)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != 422 || len(ae.Fields) != len(tt.wantFields) {
				t.Fatalf("err = %#v, want 422 naming %v", err, tt.wantFields)
			}
			for _, f := range tt.wantFields {
				if ae.Fields[f] == "" {
					t.Errorf("field %s not named: %v", f, ae.Fields)
				}
			}
			if tt.name == "both differ" && !strings.Contains(ae.Fields["amount"], "100") || tt.name == "both differ" && !strings.Contains(ae.Fields["amount"], "200") {
				t.Errorf("message does not show both values: %v", ae.Fields)
			}
		})
	}
}
