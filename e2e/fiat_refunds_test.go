package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// refundShop is a merchant with an API key (and a funded KZT wallet when
// float > 0) and a customer who authorized it and was charged.
type refundShop struct {
	p              *harness.Platform
	cust, merchant harness.User
	custWallet     string
	merchantWallet string
	key            string
	charge         map[string]any
}

// newRefundShop funds the customer with funded, lets the merchant hold
// float of its own, and charges the customer amount.
func newRefundShop(t *testing.T, p *harness.Platform, prefix string, funded, float, amount int64) *refundShop {
	t.Helper()
	s := &refundShop{p: p}
	s.cust, s.custWallet = commerceFunded(t, p, prefix+"-customer", funded)
	s.merchant, s.merchantWallet = commerceFunded(t, p, prefix+"-merchant", float)
	kr := p.Post(t, "/api/fiat/merchant/keys", s.merchant.Token, map[string]string{"label": "shop"})
	if kr.Status != http.StatusCreated {
		t.Fatalf("key: %d %s", kr.Status, kr.Body)
	}
	s.key = kr.JSON(t)["key"].(string)
	if ar := p.Post(t, "/api/fiat/merchant/authorizations", s.cust.Token, map[string]any{"walletId": s.custWallet,
		"merchantUserId": s.merchant.ID, "maxAmount": amount}); ar.Status != http.StatusCreated {
		t.Fatalf("authorize: %d %s", ar.Status, ar.Body)
	}
	r := commerceCharge(t, p, s.key, map[string]any{"walletId": s.custWallet, "amount": amount, "paymentRef": "order-1"})
	if r.Status != http.StatusCreated {
		t.Fatalf("charge: %d %s", r.Status, r.Body)
	}
	s.charge = r.JSON(t)
	if s.charge["merchantWalletId"] != s.merchantWallet {
		t.Fatalf("the charge credited %v, not the merchant's wallet %s", s.charge["merchantWalletId"], s.merchantWallet)
	}
	return s
}

func (s *refundShop) chargeID() string { return s.charge["chargeId"].(string) }

// refund posts a refund of the shop's charge with key (no header when key
// is "") and body (nil: no body).
func (s *refundShop) refund(t *testing.T, apiKey, chargeID, idem string, body any) harness.Response {
	t.Helper()
	h := map[string]string{"X-API-Key": apiKey}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return s.p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/merchant/charges/" + chargeID + "/refunds",
		Body: body, Headers: h})
}

type refundList struct {
	Items []struct {
		ID            string `json:"id"`
		ChargeID      string `json:"chargeId"`
		RequestToken  string `json:"requestToken"`
		Amount        int64  `json:"amount"`
		Status        string `json:"status"`
		TransactionID string `json:"transactionId"`
		CreatedAt     string `json:"createdAt"`
	} `json:"items"`
	Total         int64   `json:"total"`
	NextCursor    *string `json:"nextCursor"`
	RefundedTotal int64   `json:"refundedTotal"`
	Refundable    int64   `json:"refundable"`
}

func (s *refundShop) list(t *testing.T) refundList {
	t.Helper()
	r := s.p.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/fiat/merchant/charges/" + s.chargeID() + "/refunds",
		Headers: map[string]string{"X-API-Key": s.key}})
	if r.Status != http.StatusOK {
		t.Fatalf("list refunds: %d %s", r.Status, r.Body)
	}
	var l refundList
	r.Decode(t, &l)
	return l
}

// feeWallets reads the KZT fee wallets' total from the admin reconciliation.
func feeWallets(t *testing.T, p *harness.Platform, admin harness.User) (fees, drift int64) {
	t.Helper()
	r := p.Get(t, "/api/fiat/admin/reconcile", admin.Token)
	if r.Status != http.StatusOK {
		t.Fatalf("reconcile: %d %s", r.Status, r.Body)
	}
	var rep struct {
		Currencies []struct {
			Currency        string `json:"currency"`
			FeeWalletsMinor int64  `json:"feeWalletsMinor"`
			Drift           int64  `json:"drift"`
		} `json:"currencies"`
	}
	r.Decode(t, &rep)
	for _, c := range rep.Currencies {
		if c.Currency == "KZT" {
			return c.FeeWalletsMinor, c.Drift
		}
	}
	t.Fatalf("no KZT line: %s", r.Body)
	return 0, 0
}

// TestFiatRefundsCharge: charge → partial refund → second partial →
// over-refund refused; replays, bad input, someone else's charge, the
// histories, the audit, the event and the ledger entry; money conserved
// including the fee wallet.
func TestFiatRefundsCharge(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	feesBefore, _ := feeWallets(t, p, admin)
	s := newRefundShop(t, p, "refund", 100_000, 0, 20_000)
	// The customer paid 20,000; the merchant got 19,980; the fee wallet 20.
	if s.charge["fee"] != float64(20) {
		t.Fatalf("charge: %v", s.charge)
	}
	id := s.chargeID()

	first := s.refund(t, s.key, id, "refund-1", map[string]any{"amount": 5_000, "reason": "one book was damaged"})
	if first.Status != http.StatusCreated {
		t.Fatalf("first refund: %d %s", first.Status, first.Body)
	}
	f := first.JSON(t)
	if f["chargeId"] != id || f["amount"] != float64(5_000) || f["status"] != "succeeded" || f["refundable"] != float64(15_000) ||
		f["walletId"] != s.custWallet || f["id"] == "" || !strings.HasSuffix(f["createdAt"].(string), "Z") {
		t.Fatalf("first refund body: %s", first.Body)
	}
	// A replay returns the original refund, byte for byte, and moves nothing.
	replay := s.refund(t, s.key, id, "refund-1", map[string]any{"amount": 5_000, "reason": "one book was damaged"})
	if replay.Status != http.StatusCreated || string(replay.Body) != string(first.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s (original %s)", replay.Status, replay.Body, first.Body)
	}
	wantError(t, s.refund(t, s.key, id, "refund-1", map[string]any{"amount": 4_000}), http.StatusConflict, "idempotency_key_reused")

	second := s.refund(t, s.key, id, "refund-2", map[string]any{"amount": 10_000})
	if second.Status != http.StatusCreated || second.JSON(t)["refundable"] != float64(5_000) {
		t.Fatalf("second refund: %d %s", second.Status, second.Body)
	}
	wantError(t, s.refund(t, s.key, id, "refund-3", map[string]any{"amount": 5_001}), http.StatusConflict, "refund_exceeds_charge")
	// 5,000 remain but the merchant holds 4,980 (it never received the fee).
	wantError(t, s.refund(t, s.key, id, "refund-4", nil), http.StatusBadRequest, "insufficient_balance")

	// Bad input: 422 for amounts that are not positive integers, 404 for
	// someone else's or no charge, 401 without a key.
	for _, bad := range []any{0, -5, 1.5, "12", 1e16} {
		wantError(t, s.refund(t, s.key, id, "", map[string]any{"amount": bad}), http.StatusUnprocessableEntity, "validation_failed")
	}
	wantError(t, s.refund(t, s.key, id, "", map[string]any{"reason": strings.Repeat("x", 501)}), http.StatusUnprocessableEntity, "validation_failed")
	other := p.Register(t, "refund-other-merchant")
	okr := p.Post(t, "/api/fiat/merchant/keys", other.Token, map[string]string{"label": "other"})
	otherKey := okr.JSON(t)["key"].(string)
	wantError(t, s.refund(t, otherKey, id, "", map[string]any{"amount": 1}), http.StatusNotFound, "charge_not_found")
	wantError(t, s.refund(t, s.key, "not-a-charge", "", map[string]any{"amount": 1}), http.StatusNotFound, "charge_not_found")
	wantError(t, s.refund(t, "", id, "", map[string]any{"amount": 1}), http.StatusUnauthorized, "key_invalid")

	// Money: the customer has 85,000 + 15,000; the merchant 19,980 − 15,000;
	// the fee wallet gained only the charge's 20.
	if got := fiatBalance(t, p, s.cust, s.custWallet); got != 95_000 {
		t.Fatalf("customer balance %d, want 95000", got)
	}
	if got := fiatBalance(t, p, s.merchant, s.merchantWallet); got != 4_980 {
		t.Fatalf("merchant balance %d, want 4980", got)
	}
	feesAfter, drift := feeWallets(t, p, admin)
	if feesAfter-feesBefore != 20 || drift != 0 {
		t.Fatalf("fee wallets +%d (want +20), drift %d", feesAfter-feesBefore, drift)
	}
	if got := fiatBalance(t, p, s.cust, s.custWallet) + fiatBalance(t, p, s.merchant, s.merchantWallet) + (feesAfter - feesBefore); got != 100_000 {
		t.Fatalf("money not conserved: %d, deposited 100000", got)
	}

	l := s.list(t)
	if l.Total != 2 || len(l.Items) != 2 || l.RefundedTotal != 15_000 || l.Refundable != 5_000 || l.NextCursor != nil ||
		l.Items[0].Amount != 10_000 || l.Items[1].ID != f["id"] {
		t.Fatalf("refund list: %+v", l)
	}
	wantError(t, p.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/fiat/merchant/charges/" + id + "/refunds",
		Headers: map[string]string{"X-API-Key": otherKey}}), http.StatusNotFound, "charge_not_found")

	// The refunds are in both histories, the CSV, the dashboard and the audit.
	txID, tx2 := f["transactionId"].(string), second.JSON(t)["transactionId"].(string)
	historyItem := func(u harness.User, id string) map[string]any {
		t.Helper()
		var hist struct {
			Items []map[string]any `json:"items"`
		}
		p.Get(t, "/api/fiat/transactions", u.Token).Decode(t, &hist)
		for _, it := range hist.Items {
			if it["id"] == id {
				return it
			}
		}
		t.Fatalf("transaction %s is not in the history of %s", id, u.Email)
		return nil
	}
	if it := historyItem(s.cust, tx2); it["kind"] != "refund" || it["direction"] != "in" ||
		it["amountKzt"] != float64(10_000) || it["feeKzt"] != float64(0) || it["toWalletId"] != s.custWallet {
		t.Fatalf("customer history item: %v", it)
	}
	if it := historyItem(s.merchant, txID); it["kind"] != "refund" || it["direction"] != "out" || it["amountKzt"] != float64(5_000) {
		t.Fatalf("merchant history item: %v", it)
	}
	csv := p.Get(t, "/api/fiat/transactions.csv", s.cust.Token)
	if csv.Status != http.StatusOK || !strings.Contains(string(csv.Body), txID+",") || !strings.Contains(string(csv.Body), ",refund,in,completed,") {
		t.Fatalf("csv: %d %s", csv.Status, csv.Body)
	}
	dash := p.Get(t, "/api/fiat/me/dashboard", s.merchant.Token)
	if dash.Status != http.StatusOK || !strings.Contains(string(dash.Body), txID) {
		t.Fatalf("dashboard lacks the refund: %d %s", dash.Status, dash.Body)
	}
	var audit struct {
		Items []map[string]any `json:"items"`
	}
	p.Get(t, "/api/fiat/admin/audit?limit=200", admin.Token).Decode(t, &audit)
	found := false
	for _, a := range audit.Items {
		if a["action"] == "refund" && a["subject"] == txID && a["actor"] == s.merchant.ID && a["amount"] == float64(5_000) {
			found = true
		}
	}
	if !found {
		t.Fatalf("audit lacks the refund %s", txID)
	}

	ev := commerceEvent(t, p, "refund.created", 20*time.Second, func(d map[string]any) bool { return d["refundId"] == f["id"] })
	if ev["chargeId"] != id || ev["amount"] != float64(5_000) || ev["customerWalletId"] != s.custWallet ||
		ev["merchantUserId"] != s.merchant.ID || ev["reason"] != "one book was damaged" {
		t.Fatalf("refund.created: %v", ev)
	}
	// The OpenAPI slice documents the refund routes and, on their body, the
	// fee rule.
	var doc struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	p.Get(t, "/api/fiat/openapi.json", "").Decode(t, &doc)
	for _, path := range []string{"/api/fiat/merchant/charges/{id}/refunds", "/api/fiat/requests/{token}/refunds"} {
		body, _ := doc.Paths[path]["post"]["requestBody"].(map[string]any)
		ref, _ := body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"].(string)
		d, _ := doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]["description"].(string)
		if !strings.Contains(d, "no fee is charged on a refund") || !strings.Contains(d, "original payment is not returned") ||
			doc.Paths[path]["get"] == nil {
			t.Errorf("openapi.json %s: %v", path, doc.Paths[path])
		}
	}
	harness.Eventually(t, 20*time.Second, "fiat:refund ledger entry", func() bool {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		p.Get(t, "/api/ledger/entries?kind=fiat:refund&actorUserId="+s.merchant.ID, "").Decode(t, &page)
		for _, e := range page.Items {
			if e["sourceId"] == txID && e["amountCents"] == float64(5_000) {
				return true
			}
		}
		return false
	})
}

// TestFiatRefundsRequest: a paid payment request is refunded to the payer
// by its creator; the payer's fee is not returned.
func TestFiatRefundsRequest(t *testing.T) {
	p := shared(t)
	recv, recvWallet := commerceFunded(t, p, "refund-req-receiver", 0)
	payer, payerWallet := commerceFunded(t, p, "refund-req-payer", 10_000)
	open := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 500})
	req := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 3_000, "description": "concert"})
	token := req["token"].(string)
	refund := func(u harness.User, tok string, body any) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/requests/" + tok + "/refunds", Token: u.Token, Body: body})
	}
	wantError(t, refund(recv, token, nil), http.StatusConflict, "request_not_paid")
	if r := p.Post(t, "/api/fiat/requests/"+token+"/pay", payer.Token, map[string]string{"walletId": payerWallet}); r.Status != http.StatusOK {
		t.Fatalf("pay: %d %s", r.Status, r.Body)
	}
	wantError(t, refund(payer, token, nil), http.StatusNotFound, "request_not_found")
	wantError(t, refund(recv, "pr_nope", nil), http.StatusNotFound, "request_not_found")
	wantError(t, refund(recv, open["token"].(string), map[string]any{"amount": 1}), http.StatusConflict, "request_not_paid")
	wantError(t, refund(recv, token, map[string]any{"amount": 3_001}), http.StatusConflict, "refund_exceeds_charge")
	r := refund(recv, token, nil) // the whole amount
	if r.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", r.Status, r.Body)
	}
	b := r.JSON(t)
	if b["requestToken"] != token || b["amount"] != float64(3_000) || b["refundable"] != float64(0) || b["walletId"] != payerWallet {
		t.Fatalf("refund body: %s", r.Body)
	}
	wantError(t, refund(recv, token, map[string]any{"amount": 1}), http.StatusConflict, "refund_exceeds_charge")
	if got := fiatBalance(t, p, payer, payerWallet); got != 10_000-3 {
		t.Fatalf("payer balance %d, want 9997 (the fee stays)", got)
	}
	if got := fiatBalance(t, p, recv, recvWallet); got != 0 {
		t.Fatalf("receiver balance %d", got)
	}
	l := p.Get(t, "/api/fiat/requests/"+token+"/refunds", recv.Token)
	var list refundList
	l.Decode(t, &list)
	if l.Status != http.StatusOK || list.Total != 1 || list.Items[0].ID != b["id"] || list.RefundedTotal != 3_000 || list.Refundable != 0 {
		t.Fatalf("refund list: %d %s", l.Status, l.Body)
	}
	wantError(t, p.Get(t, "/api/fiat/requests/"+token+"/refunds", payer.Token), http.StatusNotFound, "request_not_found")
	ev := commerceEvent(t, p, "refund.created", 20*time.Second, func(d map[string]any) bool { return d["refundId"] == b["id"] })
	if ev["requestToken"] != token || ev["customerWalletId"] != payerWallet || ev["merchantWalletId"] != recvWallet {
		t.Fatalf("refund.created: %v", ev)
	}
}

// TestFiatRefundsConcurrent: 50 refunds of one charge at once, each with
// its own Idempotency-Key; the merchant holds plenty, so only the charge
// limits them: exactly 14 of 700 fit in 10,000, never more.
func TestFiatRefundsConcurrent(t *testing.T) {
	p := shared(t)
	s := newRefundShop(t, p, "refund-race", 20_000, 100_000, 10_000)
	const n, each = 50, 700
	var wg sync.WaitGroup
	statuses := make([]harness.Response, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = s.refund(t, s.key, s.chargeID(), fmt.Sprintf("race-%d", i), map[string]any{"amount": each})
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent refunds of one charge answered in %s", n, time.Since(start).Round(time.Millisecond))
	ok := 0
	for _, r := range statuses {
		switch {
		case r.Status == http.StatusCreated:
			ok++
		case r.Status == http.StatusConflict && r.JSON(t)["error"] == "refund_exceeds_charge":
		default:
			t.Fatalf("concurrent refund: %d %s", r.Status, r.Body)
		}
	}
	if ok != 14 {
		t.Fatalf("%d refunds succeeded, want exactly 14", ok)
	}
	l := s.list(t)
	if l.Total != 14 || l.RefundedTotal != 14*each || l.Refundable != 10_000-14*each {
		t.Fatalf("list after the race: total %d refunded %d refundable %d", l.Total, l.RefundedTotal, l.Refundable)
	}
	if got := fiatBalance(t, p, s.cust, s.custWallet); got != 20_000-10_000+14*each {
		t.Fatalf("customer balance %d", got)
	}
	if got := fiatBalance(t, p, s.merchant, s.merchantWallet); got != 100_000+9_990-14*each {
		t.Fatalf("merchant balance %d", got)
	}
}

// TestFiatRefundsCrash kills the platform while refunds are in flight and
// restarts it; clients retry with their Idempotency-Keys: every refund is
// applied exactly once and money is conserved.
func TestFiatRefundsCrash(t *testing.T) {
	p := harness.Start(t, harness.Options{})
	s := newRefundShop(t, p, "refund-crash", 60_000, 0, 50_000)
	const total, each = 40, 1_000
	client := &http.Client{Timeout: 20 * time.Second}
	post := func(key string) (int, []byte, error) {
		req, _ := http.NewRequest(http.MethodPost, p.BaseURL+"/api/fiat/merchant/charges/"+s.chargeID()+"/refunds",
			bytes.NewReader([]byte(fmt.Sprintf(`{"amount":%d}`, each))))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", s.key)
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	var done, retries atomic.Int64
	killed := make(chan struct{})
	var once sync.Once
	ids := make([]string, total)
	var wg sync.WaitGroup
	jobs := make(chan int)
	deadline := time.Now().Add(60 * time.Second)
	errs := make(chan string, total)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				key := fmt.Sprintf("crash-refund-%d", i)
				for {
					st, body, err := post(key)
					if err == nil && st == http.StatusCreated {
						var r struct {
							ID string `json:"id"`
						}
						_ = json.Unmarshal(body, &r)
						ids[i] = r.ID
						break
					}
					if err == nil && st < 500 {
						errs <- fmt.Sprintf("refund %d: %d %s", i, st, body)
						break
					}
					if time.Now().After(deadline) {
						errs <- fmt.Sprintf("refund %d: no answer before the deadline (%v %d)", i, err, st)
						break
					}
					retries.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
				if done.Add(1) == total/4 {
					once.Do(func() { close(killed) })
				}
			}
		}()
	}
	go func() {
		for i := 0; i < total; i++ {
			jobs <- i
		}
		close(jobs)
	}()
	<-killed
	p.Kill()
	time.Sleep(300 * time.Millisecond)
	p.Restart()
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if t.Failed() {
		return
	}
	if retries.Load() == 0 {
		t.Fatal("no request was retried: the crash did not hit the refunds")
	}
	distinct := map[string]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	if len(distinct) != total {
		t.Fatalf("%d distinct refund ids for %d keys", len(distinct), total)
	}
	l := s.list(t)
	if l.Total != total || l.RefundedTotal != total*each {
		t.Fatalf("after the crash: %d refunds of %d, want %d of %d", l.Total, l.RefundedTotal, total, total*each)
	}
	cust, merch := fiatBalance(t, p, s.cust, s.custWallet), fiatBalance(t, p, s.merchant, s.merchantWallet)
	if cust != 60_000-50_000+total*each || merch != 49_950-total*each || cust+merch+50 != 60_000 {
		t.Fatalf("customer %d, merchant %d: each refund must apply once", cust, merch)
	}
	t.Logf("%d refunds, %d requests retried across the crash", total, retries.Load())
}
