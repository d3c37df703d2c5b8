package trade

import (
	"errors"
	"testing"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

// assertField checks that err is a 422 naming field ("" means no error).
func assertField(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.CodeValidationFailed || ae.Fields[field] == "" {
		t.Fatalf("got %v, want validation_failed on %s", err, field)
	}
}

func TestTopUpRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		units  int64
		field  string
		absent bool // the id names no account: 404
	}{
		{"decimal", `{"accountId":"acc1","amount":0.1}`, 1_000_000, "", false},
		{"seven decimals", `{"accountId":"acc1","amount":12.0000001}`, 120_000_001, "", false},
		{"cap", `{"accountId":"acc1","amount":10000}`, schemas.MaxTopUp, "", false},
		{"cap with zeros", `{"accountId":"acc1","amount":10000.0000000}`, schemas.MaxTopUp, "", false},
		{"over cap", `{"accountId":"acc1","amount":10000.0000001}`, 0, "amount", false},
		{"eight decimals", `{"accountId":"acc1","amount":0.00000001}`, 0, "amount", false},
		{"exponent", `{"accountId":"acc1","amount":1e3}`, 0, "amount", false},
		{"string", `{"accountId":"acc1","amount":"5"}`, 0, "amount", false},
		{"zero", `{"accountId":"acc1","amount":0}`, 0, "amount", false},
		{"negative", `{"accountId":"acc1","amount":-1}`, 0, "amount", false},
		{"bool", `{"accountId":"acc1","amount":true}`, 0, "amount", false},
		{"null", `{"accountId":"acc1","amount":null}`, 0, "amount", false},
		{"missing amount", `{"accountId":"acc1"}`, 0, "amount", false},
		{"missing account", `{"amount":1}`, 0, "accountId", false},
		{"account not a string", `{"accountId":5,"amount":1}`, 0, "accountId", false},
		{"NUL in account", `{"accountId":"a\u0000b","amount":1}`, 0, "accountId", false},
		{"malformed account id", `{"accountId":"../../x","amount":1}`, 1 * schemas.TNUScale, "", true},
		{"long account id", `{"accountId":"` + string(make([]byte, 0)) + `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","amount":1}`, 1 * schemas.TNUScale, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req topUpRequest
			err := bind.DecodeChecked([]byte(tt.body), &req)
			var d schemas.TradeTopUp
			ok := true
			if err == nil {
				d, ok, err = req.validate()
			}
			assertField(t, err, tt.field)
			if tt.field == "" && (int64(d.Amount) != tt.units || ok == tt.absent) {
				t.Fatalf("got %d ok=%v", d.Amount, ok)
			}
		})
	}
}

func TestTransferRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		field  string
		absent bool
	}{
		{"ok", `{"from":"a1","to":"b1","amount":0.2}`, "", false},
		{"large", `{"from":"a1","to":"b1","amount":50000}`, "", false},
		{"same account", `{"from":"a1","to":"a1","amount":1}`, "to", false},
		{"missing to", `{"from":"a1","amount":1}`, "to", false},
		{"too precise", `{"from":"a1","to":"b1","amount":1.123456789}`, "amount", false},
		{"exponent", `{"from":"a1","to":"b1","amount":2E-1}`, "amount", false},
		{"negative", `{"from":"a1","to":"b1","amount":-0.5}`, "amount", false},
		{"unknown-looking to", `{"from":"a1","to":"no such account","amount":1}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req transferRequest
			err := bind.DecodeChecked([]byte(tt.body), &req)
			ok := true
			if err == nil {
				_, ok, err = req.validate()
			}
			assertField(t, err, tt.field)
			if tt.field == "" && ok == tt.absent {
				t.Fatalf("ok = %v", ok)
			}
		})
	}
}
