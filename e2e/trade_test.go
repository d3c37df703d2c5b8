package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestTradeTopUpTransferCSV walks the test-net wallet over HTTP: accounts
// open on first read, exact decimal top-ups (0.1 + 0.2 is 0.3), lookup by
// e-mail, a transfer, both histories, idempotent replays, and the CSV.
func TestTradeTopUpTransferCSV(t *testing.T) {
	p := shared(t)
	alice, bob := p.Register(t, "trade-alice"), p.Register(t, "trade-bob")
	a := tradeAccount(t, p, alice)
	if again := tradeAccount(t, p, alice); again != a {
		t.Fatalf("a second read opened another account: %s %s", a, again)
	}
	b := tradeAccount(t, p, bob)

	top := func(amount string, key string) harness.Response {
		h := map[string]string{}
		if key != "" {
			h["Idempotency-Key"] = key
		}
		return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/trade/topup", Token: alice.Token,
			Body: `{"accountId":"` + a + `","amount":` + amount + `}`, Headers: h})
	}
	if r := top("0.1", ""); r.Status != http.StatusOK || r.Header.Get("Idempotency-Key") == "" {
		t.Fatalf("top-up: %d %s %v", r.Status, r.Body, r.Header)
	}
	r := top("0.2", "")
	f := rawFields(t, r.Body)
	if r.Status != http.StatusOK || string(f["balance"]) != "0.3" || string(f["id"]) != `"`+a+`"` {
		t.Fatalf("0.1 + 0.2: %d %s", r.Status, r.Body)
	}
	var ts string
	_ = json.Unmarshal(f["updatedAt"], &ts)
	if _, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") {
		t.Fatalf("updatedAt %q", ts)
	}
	// Idempotent top-up: same key and body → the same answer byte for byte.
	first := top("12.0000001", "topup-key-1")
	replay := top("12.0000001", "topup-key-1")
	if first.Status != http.StatusOK || !bytes.Equal(first.Body, replay.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s", first.Status, first.Body, replay.Status, replay.Body)
	}
	if string(rawFields(t, first.Body)["balance"]) != "12.3000001" {
		t.Fatalf("balance %s", first.Body)
	}
	if r := top("1", "topup-key-1"); r.Status != http.StatusConflict || r.JSON(t)["error"] != "idempotency_key_reused" {
		t.Fatalf("reused key: %d %s", r.Status, r.Body)
	}

	// Lookup by e-mail, case-insensitively.
	r = p.Get(t, "/api/trade/accounts/lookup?email="+url.QueryEscape(strings.ToUpper(bob.Email)), alice.Token)
	if r.Status != http.StatusOK || r.JSON(t)["id"] != b || !strings.EqualFold(r.JSON(t)["owner"].(string), bob.Email) {
		t.Fatalf("lookup: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/trade/accounts/lookup?email=nobody-here@example.com", alice.Token); r.Status != http.StatusNotFound || r.JSON(t)["error"] != "account_not_found" {
		t.Fatalf("lookup unknown: %d %s", r.Status, r.Body)
	}

	// Transfer 0.3000001 to bob.
	tr := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/trade/transfer", Token: alice.Token,
		Body: `{"from":"` + a + `","to":"` + b + `","amount":0.3000001}`, Headers: map[string]string{"Idempotency-Key": "tr-1"}})
	f = rawFields(t, tr.Body)
	if tr.Status != http.StatusCreated || string(f["amount"]) != "0.3000001" || string(f["from"]) != `"`+a+`"` || string(f["to"]) != `"`+b+`"` {
		t.Fatalf("transfer: %d %s", tr.Status, tr.Body)
	}
	again := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/trade/transfer", Token: alice.Token,
		Body: `{"from":"` + a + `","to":"` + b + `","amount":0.3000001}`, Headers: map[string]string{"Idempotency-Key": "tr-1"}})
	if again.Status != http.StatusCreated || !bytes.Equal(again.Body, tr.Body) {
		t.Fatalf("transfer replay: %d %s", again.Status, again.Body)
	}
	if got := tradeBalanceUnits(t, p, alice); got != 120_000_000 {
		t.Fatalf("alice balance %d units", got)
	}
	if got := tradeBalanceUnits(t, p, bob); got != 3_000_001 {
		t.Fatalf("bob balance %d units", got)
	}
	// Bob cannot spend from alice's account; too much is refused.
	if r := p.Post(t, "/api/trade/transfer", bob.Token, map[string]any{"from": a, "to": b, "amount": 1}); r.Status != http.StatusNotFound || r.JSON(t)["error"] != "account_not_found" {
		t.Fatalf("foreign from: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/trade/transfer", bob.Token, map[string]any{"from": b, "to": a, "amount": 1}); r.Status != http.StatusBadRequest || r.JSON(t)["error"] != "insufficient_balance" {
		t.Fatalf("insufficient: %d %s", r.Status, r.Body)
	}

	// Histories: alice has three top-ups and the transfer, bob the transfer.
	r = p.Get(t, "/api/trade/operations?limit=2", alice.Token)
	var page struct {
		Items []struct {
			ID     string          `json:"id"`
			Kind   string          `json:"kind"`
			Amount json.RawMessage `json:"amount"`
			From   *string         `json:"from"`
			To     string          `json:"to"`
		} `json:"items"`
		Total      int     `json:"total"`
		NextCursor *string `json:"nextCursor"`
	}
	r.Decode(t, &page)
	if r.Status != http.StatusOK || page.Total != 4 || len(page.Items) != 2 || page.NextCursor == nil {
		t.Fatalf("operations: %d %s", r.Status, r.Body)
	}
	r = p.Get(t, "/api/trade/operations?limit=2&cursor="+*page.NextCursor, alice.Token)
	r.Decode(t, &page)
	if len(page.Items) != 2 || page.NextCursor != nil || !bytes.Contains(r.Body, []byte(`"nextCursor":null`)) {
		t.Fatalf("operations page 2: %s", r.Body)
	}
	r = p.Get(t, "/api/trade/operations", bob.Token)
	r.Decode(t, &page)
	if page.Total != 1 || page.Items[0].Kind != "transfer" || string(page.Items[0].Amount) != "0.3000001" ||
		page.Items[0].From == nil || *page.Items[0].From != a || page.Items[0].To != b {
		t.Fatalf("bob operations: %s", r.Body)
	}
	if r := p.Get(t, "/api/trade/operations?cursor=%00zz", alice.Token); r.Status != http.StatusBadRequest || r.JSON(t)["error"] != "invalid_cursor" {
		t.Fatalf("bad cursor: %d %s", r.Status, r.Body)
	}

	// CSV: exact header, no BOM, the same four operations.
	r = p.Get(t, "/api/trade/operations.csv", alice.Token)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %v", r.Status, r.Header)
	}
	if !bytes.HasPrefix(r.Body, []byte("id,kind,amount,from,to,createdAt\r\n")) {
		t.Fatalf("csv header: %q", r.Body[:min(len(r.Body), 60)])
	}
	recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("csv rows: %v %q", err, r.Body)
	}
	amounts := map[string]int{}
	for _, rec := range recs[1:] {
		amounts[rec[1]+" "+rec[2]]++
		if _, err := time.Parse(time.RFC3339, rec[5]); err != nil {
			t.Fatalf("createdAt %q", rec[5])
		}
		if rec[1] == "topup" && (rec[3] != "" || rec[4] != a) {
			t.Fatalf("top-up row %v", rec)
		}
	}
	want := map[string]int{"topup 0.1": 1, "topup 0.2": 1, "topup 12.0000001": 1, "transfer 0.3000001": 1}
	for k, n := range want {
		if amounts[k] != n {
			t.Fatalf("csv amounts %v", amounts)
		}
	}

	// Each operation is chained in the ledger (trade:topup, trade:transfer),
	// the exact amount a decimal string in meta.
	transferID := rawFields(t, tr.Body)["id"]
	harness.Eventually(t, 20*time.Second, "trade ledger entries", func() bool {
		var page struct {
			Items []struct {
				Kind     string         `json:"kind"`
				SourceID string         `json:"sourceId"`
				Meta     map[string]any `json:"meta"`
			} `json:"items"`
		}
		p.Get(t, "/api/ledger/entries?actorUserId="+alice.ID, "").Decode(t, &page)
		kinds := map[string]int{}
		for _, e := range page.Items {
			kinds[e.Kind]++
			if e.Kind == "trade:transfer" && (`"`+e.SourceID+`"` != string(transferID) || e.Meta["amount"] != "0.3000001" ||
				e.Meta["from"] != a || e.Meta["to"] != b || e.Meta["currency"] != "TNU") {
				t.Fatalf("ledger entry %+v", e)
			}
		}
		return kinds["trade:topup"] == 3 && kinds["trade:transfer"] == 1
	})
}

// TestTradeBadInput sends malformed amounts, ids and e-mails: every one gets
// the spec's code, never a 500, and moves nothing.
func TestTradeBadInput(t *testing.T) {
	p := shared(t)
	u, v := p.Register(t, "trade-bad"), p.Register(t, "trade-bad2")
	a, b := tradeAccount(t, p, u), tradeAccount(t, p, v)
	post := func(path, body string) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodPost, Path: path, Token: u.Token, Body: body})
	}
	cases := []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"negative", "/api/trade/topup", `{"accountId":"` + a + `","amount":-1}`, 422, "validation_failed", "amount"},
		{"zero", "/api/trade/topup", `{"accountId":"` + a + `","amount":0}`, 422, "validation_failed", "amount"},
		{"eight decimals", "/api/trade/topup", `{"accountId":"` + a + `","amount":0.00000001}`, 422, "validation_failed", "amount"},
		{"exponent", "/api/trade/topup", `{"accountId":"` + a + `","amount":1e3}`, 422, "validation_failed", "amount"},
		{"string", "/api/trade/topup", `{"accountId":"` + a + `","amount":"10"}`, 422, "validation_failed", "amount"},
		{"over cap", "/api/trade/topup", `{"accountId":"` + a + `","amount":10000.0000001}`, 422, "validation_failed", "amount"},
		{"huge", "/api/trade/topup", `{"accountId":"` + a + `","amount":1` + strings.Repeat("0", 400) + `}`, 422, "validation_failed", "amount"},
		{"missing amount", "/api/trade/topup", `{"accountId":"` + a + `"}`, 422, "validation_failed", "amount"},
		{"NUL id", "/api/trade/topup", `{"accountId":"a\u0000","amount":1}`, 422, "validation_failed", "accountId"},
		{"not an object", "/api/trade/topup", `[1]`, 400, "invalid_json", ""},
		{"malformed", "/api/trade/topup", `{"accountId":`, 400, "invalid_json", ""},
		{"unknown account", "/api/trade/topup", `{"accountId":"2Zz9NoSuchAccount","amount":1}`, 404, "account_not_found", ""},
		{"malformed account id", "/api/trade/topup", `{"accountId":"../x y","amount":1}`, 404, "account_not_found", ""},
		{"someone else's account", "/api/trade/topup", `{"accountId":"` + b + `","amount":1}`, 404, "account_not_found", ""},
		{"unknown receiver", "/api/trade/transfer", `{"from":"` + a + `","to":"2Zz9NoSuchAccount","amount":1}`, 404, "account_not_found", ""},
		{"malformed receiver", "/api/trade/transfer", `{"from":"` + a + `","to":"x/y","amount":1}`, 404, "account_not_found", ""},
		{"to self", "/api/trade/transfer", `{"from":"` + a + `","to":"` + a + `","amount":1}`, 422, "validation_failed", "to"},
		{"transfer exponent", "/api/trade/transfer", `{"from":"` + a + `","to":"` + b + `","amount":5E0}`, 422, "validation_failed", "amount"},
		{"insufficient", "/api/trade/transfer", `{"from":"` + a + `","to":"` + b + `","amount":0.0000001}`, 400, "insufficient_balance", ""},
	}
	for _, c := range cases {
		r := post(c.path, c.body)
		if r.Status != c.status {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
		m := r.JSON(t)
		if m["error"] != c.code {
			t.Fatalf("%s: %s", c.name, r.Body)
		}
		if c.field != "" {
			if fields, _ := m["fields"].(map[string]any); fields[c.field] == nil {
				t.Fatalf("%s: %s", c.name, r.Body)
			}
		}
	}
	if r := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/trade/topup", Token: u.Token,
		Body: []byte(`{"accountId":"` + a + `","amount":1}`), Headers: map[string]string{"Content-Type": "text/plain"}}); r.Status != 400 {
		t.Fatalf("content type: %d %s", r.Status, r.Body)
	}
	for _, q := range []string{"", "?email=", "?email=%00", "?email=%ff%fe"} {
		r := p.Get(t, "/api/trade/accounts/lookup"+q, u.Token)
		if r.Status != 422 {
			t.Fatalf("lookup %q: %d %s", q, r.Status, r.Body)
		}
	}
	if r := p.Get(t, "/api/trade/accounts/lookup?email=not-an-email", u.Token); r.Status != 404 {
		t.Fatalf("lookup malformed: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/trade/accounts", ""); r.Status != 401 || r.JSON(t)["error"] != "auth_required" {
		t.Fatalf("no token: %d %s", r.Status, r.Body)
	}
	if got := tradeBalanceUnits(t, p, u); got != 0 {
		t.Fatalf("balance moved: %d", got)
	}
}
