package build

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/storage/build"
)

func TestCreateVacancyValidate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	valid := `{"projectId":"p1","title":" Go dev ","description":"d","salary":100,"salaryCurrency":"kzt",
		"skills":["Go"," go ","SQL"],"city":"Almaty","expiresAt":"2026-01-02T00:00:00+05:00"}`
	with := func(field, value string) string {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(valid), &m)
		if value == "" {
			delete(m, field)
		} else {
			m[field] = json.RawMessage(value)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"valid", valid, ""},
		{"skills null", with("skills", "null"), ""},
		{"skills missing", with("skills", ""), ""},
		{"past expiry", with("expiresAt", `"2025-12-31T23:59:59Z"`), "expiresAt"},
		{"now is not future", with("expiresAt", `"2026-01-01T00:00:00Z"`), "expiresAt"},
		{"expiry garbage", with("expiresAt", `"soon"`), "expiresAt"},
		{"expiry missing", with("expiresAt", ""), "expiresAt"},
		{"salary fraction", with("salary", "1.5"), "salary"},
		{"salary string", with("salary", `"100"`), "salary"},
		{"salary missing", with("salary", ""), "salary"},
		{"currency", with("salaryCurrency", `"KZ1"`), "salaryCurrency"},
		{"currency long", with("salaryCurrency", `"KZTT"`), "salaryCurrency"},
		{"title long", with("title", `"`+strings.Repeat("t", 201)+`"`), "title"},
		{"lone surrogate decodes to U+FFFD", with("title", `"\ud800"`), ""},
		{"skills object", with("skills", `{}`), "skills"},
		{"skill blank", with("skills", `["go",""]`), "skills"},
		{"skill long", with("skills", `["`+strings.Repeat("s", 101)+`"]`), "skills"},
		{"city blank", with("city", `" "`), "city"},
		{"project missing", with("projectId", ""), "projectId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req createVacancyRequest
			// The declared rules first, as the server checks them.
			err := bind.DecodeChecked([]byte(tt.body), &req)
			var v build.Vacancy
			if err == nil {
				v, err = req.validate(now)
			}
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Fields[tt.field] == "" {
				t.Fatalf("want a problem with %s, got %v (%+v)", tt.field, err, v)
			}
		})
	}
	var req createVacancyRequest
	_ = bind.Decode([]byte(valid), &req)
	v, err := req.validate(now)
	if err != nil || v.Title != "Go dev" || v.SalaryCurrency != "KZT" || strings.Join(v.Skills, ",") != "Go,SQL" ||
		!v.ExpiresAt.Equal(time.Date(2026, 1, 1, 19, 0, 0, 0, time.UTC)) || v.ExpiresAt.Location() != time.UTC {
		t.Fatalf("normalised %+v %v", v, err)
	}
}

func TestFormatMinor(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{1: "0.01 KZT", 100: "1.00 KZT", 12345: "123.45 KZT", 1_000_000_000_000_000: "10000000000000.00 KZT"} {
		if got := formatMinor(in, "KZT"); got != want {
			t.Errorf("formatMinor(%d) = %q, want %q", in, got, want)
		}
	}
	if got := majorUnits(1205); got != "12.05" {
		t.Errorf("majorUnits = %s", got)
	}
}
