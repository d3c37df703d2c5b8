package bind

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fintech/platform/gateway/apierr"
)

// FuzzAmount: any JSON value decodes without an error; an accepted amount is
// an integer in [1, MaxAmount] written exactly as the client sent it (no
// float anywhere on the way).
func FuzzAmount(f *testing.F) {
	for _, s := range []string{"1", "1000000000000000", "1000000000000001", "0", "-1", "1.5", "1e3", `"10"`, "null",
		"99999999999999999999", "[]", "{}", "007"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var a Amount
		if err := a.UnmarshalJSON(in); err != nil {
			t.Fatalf("UnmarshalJSON(%q) = %v", in, err)
		}
		if !a.Set || a.Problem != "" {
			return
		}
		if a.Value < 1 || a.Value > MaxAmount {
			t.Fatalf("accepted %d from %q", a.Value, in)
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(in)), 10, 64); err != nil || n != a.Value {
			t.Fatalf("accepted %d from %q, which is not that integer", a.Value, in)
		}
	})
}

// FuzzCursor: every position this API encodes decodes back to itself, and
// anything else is refused as invalid_cursor or decodes to clean text.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"3MVOFHt076emQ4T0qpI0jya5GYf", "0|abc", "AA", "%25", "@@", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s != "" && utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
			if got, err := DecodeCursor(Cursor(s)); err != nil || got != s {
				t.Fatalf("round trip of %q: %q, %v", s, got, err)
			}
		}
		got, err := DecodeCursor(s)
		var ae *apierr.Error
		switch {
		case err == nil && !cleanText([]byte(got)):
			t.Fatalf("DecodeCursor(%q) passed %q", s, got)
		case err != nil && (!errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != apierr.CodeInvalidCursor):
			t.Fatalf("DecodeCursor(%q) = %v", s, err)
		}
	})
}

// FuzzDecode: the binder answers any body with success, 400 or 422, never a
// panic or another error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"walletId":"w","amount":5,"memo":"m","tags":["a"]}`, `{"amount":"5"}`, `{"tags":{}}`,
		`[]`, `{`, `{"a":1} x`, ``, `{"memo":"a\u0000"}`, "{\"memo\":\"\xff\"}", `{"amount":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var dst struct {
			WalletID string            `json:"walletId"`
			Amount   Amount            `json:"amount"`
			Memo     string            `json:"memo"`
			Tags     []string          `json:"tags"`
			Meta     map[string]string `json:"meta"`
			Flag     bool              `json:"flag"`
		}
		err := Decode(body, &dst)
		if err == nil {
			return
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) || (ae.Status != http.StatusBadRequest && ae.Status != http.StatusUnprocessableEntity) {
			t.Fatalf("Decode(%q) = %v", body, err)
		}
	})
}
