package mask

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
)

func TestReplayed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		wantStatus int
		check      func(t *testing.T, m map[string]any)
	}{
		{"authorized becomes 200 idempotent", 201, `{"id":"c1","status":"authorized","idempotent":false}`, 200,
			func(t *testing.T, m map[string]any) {
				if m["idempotent"] != true || m["id"] != "c1" {
					t.Fatalf("body %v", m)
				}
			}},
		{"declined stays 402, idempotent inside and out", 402,
			`{"error":"charge_declined","declineReason":"limit_exceeded","idempotent":false,"charge":{"id":"c2","idempotent":false}}`, 402,
			func(t *testing.T, m map[string]any) {
				c, _ := m["charge"].(map[string]any)
				if m["idempotent"] != true || c["idempotent"] != true || c["id"] != "c2" || m["declineReason"] != "limit_exceeded" {
					t.Fatalf("body %v", m)
				}
			}},
		{"not found is kept", 404, `{"error":"not_found","message":"mask not found"}`, 404,
			func(t *testing.T, m map[string]any) {
				if _, ok := m["idempotent"]; ok {
					t.Fatalf("body %v", m)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := replayed(schemas.Reply{Status: tt.status, Body: json.RawMessage(tt.body), Replayed: true})
			if rep.Status != tt.wantStatus || !rep.Replayed {
				t.Fatalf("status %d replayed %v", rep.Status, rep.Replayed)
			}
			var m map[string]any
			if err := json.Unmarshal(rep.Body, &m); err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
}

func TestChargeCommandID(t *testing.T) {
	t.Parallel()
	a := ChargeCommandID("u1", "m1", "ref")
	if a != ChargeCommandID("u1", "m1", "ref") {
		t.Fatal("not deterministic")
	}
	for _, other := range []string{ChargeCommandID("u2", "m1", "ref"), ChargeCommandID("u1", "m2", "ref"),
		ChargeCommandID("u1", "m1", "ref2"), ChargeCommandID("u1", "m1r", "ef")} {
		if other == a {
			t.Fatalf("collision with %s", other)
		}
	}
}

func TestChargeValidate(t *testing.T) {
	t.Parallel()
	amount := func(v int64) bind.Amount { return bind.Amount{Value: v, Set: true} }
	ok := createChargeRequest{MaskID: "m", AmountCents: amount(5), Merchant: "shop", PaymentRef: "r"}
	tests := []struct {
		name  string
		req   createChargeRequest
		field string // "" = valid
	}{
		{"valid", ok, ""},
		{"no mask", func() createChargeRequest { r := ok; r.MaskID = " "; return r }(), "maskId"},
		{"no amount", func() createChargeRequest { r := ok; r.AmountCents = bind.Amount{}; return r }(), "amountCents"},
		{"bad amount", func() createChargeRequest { r := ok; r.AmountCents = bind.Amount{Set: true, Problem: "x"}; return r }(), "amountCents"},
		{"no merchant", func() createChargeRequest { r := ok; r.Merchant = ""; return r }(), "merchant"},
		{"no paymentRef", func() createChargeRequest { r := ok; r.PaymentRef = ""; return r }(), "paymentRef"},
		{"long paymentRef", func() createChargeRequest { r := ok; r.PaymentRef = string(make([]byte, 201)); return r }(), "paymentRef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := bind.CheckRules(&tt.req) // the declared tags, as the server checks them
			if err == nil {
				_, err = tt.req.validate()
			}
			assertField(t, err, tt.field)
		})
	}
}

func assertField(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity {
		t.Fatalf("want a 422 naming %s, got %v", field, err)
	}
	if _, ok := ae.Fields[field]; !ok {
		t.Fatalf("want a problem with %s, got %v", field, ae.Fields)
	}
}
