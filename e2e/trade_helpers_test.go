package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fintech/platform/e2e/harness"
)

// tradeAccount opens (or reads) the user's account and returns its id.
func tradeAccount(t *testing.T, p *harness.Platform, u harness.User) string {
	t.Helper()
	resp := p.Get(t, "/api/trade/accounts", u.Token)
	if resp.Status != http.StatusOK {
		t.Fatalf("accounts: %d %s", resp.Status, resp.Body)
	}
	var out struct {
		Items []struct {
			ID       string `json:"id"`
			Currency string `json:"currency"`
		} `json:"items"`
	}
	resp.Decode(t, &out)
	if len(out.Items) != 1 || out.Items[0].Currency != "TNU" {
		t.Fatalf("accounts: %s", resp.Body)
	}
	return out.Items[0].ID
}

// tradeBalanceUnits reads the caller's balance in units of 10^-7 TNU,
// decoding the JSON number's text exactly (no float).
func tradeBalanceUnits(t *testing.T, p *harness.Platform, u harness.User) int64 {
	t.Helper()
	resp := p.Get(t, "/api/trade/accounts", u.Token)
	var out struct {
		Items []struct {
			Balance json.Number `json:"balance"`
		} `json:"items"`
	}
	resp.Decode(t, &out)
	if resp.Status != http.StatusOK || len(out.Items) != 1 {
		t.Fatalf("accounts: %d %s", resp.Status, resp.Body)
	}
	return tnuUnits(t, out.Items[0].Balance.String())
}

// tnuUnits converts the exact decimal text of an amount into units.
func tnuUnits(t *testing.T, s string) int64 {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	u := d.Shift(7)
	if !u.IsInteger() {
		t.Fatalf("amount %q has more than 7 decimals", s)
	}
	return u.IntPart()
}

// rawFields decodes a JSON object keeping each value's exact text.
func rawFields(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not a JSON object: %s", body)
	}
	return m
}
