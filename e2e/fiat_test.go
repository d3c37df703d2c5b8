package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/segmentio/ksuid"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/fintech/platform/e2e/harness"
)

func TestFiatWallets(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "fiat-wal")
	other := p.Register(t, "fiat-wal-other")

	r := p.Post(t, "/api/fiat/wallets", u.Token, map[string]string{"currency": "KZT"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	w := r.JSON(t)
	if w["currency"] != "KZT" || w["balance"] != float64(0) || w["status"] != "active" || w["id"] == "" {
		t.Fatalf("wallet = %v", w)
	}
	kzt := w["id"].(string)
	fiatCreateWallet(t, p, u, "USD")
	otherWallet := fiatCreateWallet(t, p, other, "KZT")

	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"second KZT", map[string]string{"currency": "KZT"}, 409, "wallet_exists"},
		{"unknown currency", map[string]string{"currency": "EUR"}, 422, "validation_failed"},
		{"missing currency", map[string]string{}, 422, "validation_failed"},
		{"number currency", map[string]any{"currency": 5}, 422, "validation_failed"},
		{"malformed", []byte(`{"currency":`), 400, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, "/api/fiat/wallets", u.Token, tt.body)
			if r.Status != tt.status || r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}

	list := p.Get(t, "/api/fiat/wallets", u.Token)
	var ws struct {
		Items []map[string]any `json:"items"`
	}
	list.Decode(t, &ws)
	if len(ws.Items) != 2 {
		t.Fatalf("wallets = %s", list.Body)
	}
	if r := p.Get(t, "/api/fiat/wallets", ""); r.Status != 401 {
		t.Fatalf("no token: %d", r.Status)
	}

	pub := p.Get(t, "/api/fiat/wallets/"+kzt+"/public", "")
	if pub.Status != 200 || bytes.Contains(pub.Body, []byte(u.Email)) || bytes.Contains(pub.Body, []byte(u.ID)) ||
		bytes.Contains(pub.Body, []byte("balance")) {
		t.Fatalf("public view: %d %s", pub.Status, pub.Body)
	}
	if r := p.Get(t, "/api/fiat/wallets/nope/public", ""); r.Status != 404 || r.JSON(t)["error"] != "wallet_not_found" {
		t.Fatalf("unknown public: %d %s", r.Status, r.Body)
	}
	// Another user's wallet is not found.
	r = p.Post(t, "/api/fiat/withdraw", u.Token, map[string]any{"walletId": otherWallet, "amount": 1, "destination": "x"})
	if r.Status != 404 || r.JSON(t)["error"] != "wallet_not_found" {
		t.Fatalf("other's wallet: %d %s", r.Status, r.Body)
	}
}

func TestFiatMoneyFlow(t *testing.T) {
	p := shared(t)
	secret := fiatSecret(t, p)
	alice := p.Register(t, "fiat-alice")
	bob := p.Register(t, "fiat-bob")
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	aw := fiatCreateWallet(t, p, alice, "KZT")

	// Deposit through a signed webhook; a replay does not credit twice.
	dep := p.Post(t, "/api/fiat/deposit", alice.Token, map[string]any{"walletId": aw, "amount": 1_000_000})
	if dep.Status != 201 {
		t.Fatalf("deposit: %d %s", dep.Status, dep.Body)
	}
	d := dep.JSON(t)
	if d["status"] != "pending" || d["sessionId"] == "" || !strings.Contains(d["url"].(string), "/api/fiat/checkout/") {
		t.Fatalf("deposit = %v", d)
	}
	depID := d["depositId"].(string)
	evID := "evt_" + ksuid.New().String()
	ev := fiatEvent(t, evID, depID, 1_000_000, "kzt")

	forged := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev, Secret: "whsec_wrong"})
	if r := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/deposit/webhook", Body: ev,
		Headers: map[string]string{"Stripe-Signature": forged.Header}}); r.Status != 400 || r.JSON(t)["error"] != "signature_invalid" {
		t.Fatalf("forged: %d %s", r.Status, r.Body)
	}
	if r := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/deposit/webhook", Body: ev}); r.Status != 400 {
		t.Fatalf("unsigned: %d %s", r.Status, r.Body)
	}
	// A payment that does not match its deposit (amount, or a currency not
	// in the processor's lower case) is received and kept in needs_review,
	// never refused with a 400 stored as the event's answer; an admin can
	// only refund it.
	for _, c := range []struct {
		amount   int64
		currency string
	}{{999, "kzt"}, {5_000, "KZT"}} {
		other := p.Post(t, "/api/fiat/deposit", alice.Token, map[string]any{"walletId": aw, "amount": 5_000})
		if other.Status != 201 {
			t.Fatalf("deposit: %d %s", other.Status, other.Body)
		}
		otherID := other.JSON(t)["depositId"].(string)
		ev := fiatEvent(t, "evt_"+ksuid.New().String(), otherID, c.amount, c.currency)
		if r := fiatSignedWebhook(t, p, secret, ev); r.Status != 200 || r.JSON(t)["status"] != "needs_review" {
			t.Fatalf("mismatched payment %d %s: %d %s", c.amount, c.currency, r.Status, r.Body)
		}
		if r := p.Post(t, "/api/fiat/admin/deposits/"+otherID+"/credit", admin.Token, map[string]any{}); r.Status != 409 {
			t.Fatalf("credit of a mismatched deposit: %d %s", r.Status, r.Body)
		}
		if r := p.Post(t, "/api/fiat/admin/deposits/"+otherID+"/refund", admin.Token, map[string]any{"reason": "mismatch"}); r.Status != 200 {
			t.Fatalf("refund of a mismatched deposit: %d %s", r.Status, r.Body)
		}
		// The refund returns what was paid, shown beside the expected amount.
		var refunded struct {
			Items []map[string]any `json:"items"`
		}
		p.Get(t, "/api/fiat/admin/deposits?status=refunded&limit=200", admin.Token).Decode(t, &refunded)
		found := false
		for _, it := range refunded.Items {
			if it["depositId"] == otherID {
				found = it["amount"] == 5_000.0 && it["paidAmount"] == float64(c.amount)
			}
		}
		if !found {
			t.Fatalf("refunded deposit %s not listed with paidAmount %d: %s", otherID, c.amount, p.Get(t, "/api/fiat/admin/deposits?status=refunded&limit=200", admin.Token).Body)
		}
	}
	if r := fiatSignedWebhook(t, p, secret, ev); r.Status != 200 || r.JSON(t)["idempotent"] != false {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	if r := fiatSignedWebhook(t, p, secret, ev); r.Status != 200 || r.JSON(t)["idempotent"] != true {
		t.Fatalf("replayed webhook: %d %s", r.Status, r.Body)
	}
	// Another paid event for the completed deposit (a processor's double
	// charge) is not credited, nor acknowledged silently: it is a payment
	// of its own awaiting review, listed with what was paid, refundable once.
	second := fiatSignedWebhook(t, p, secret, fiatEvent(t, "evt_"+ksuid.New().String(), depID, 1_000_000, "kzt"))
	sres := second.JSON(t)
	secondID, _ := sres["depositId"].(string)
	if second.Status != 200 || sres["idempotent"] != false || sres["status"] != "needs_review" || secondID == "" || secondID == depID {
		t.Fatalf("second event: %d %s", second.Status, second.Body)
	}
	var queue struct {
		Items []map[string]any `json:"items"`
	}
	p.Get(t, "/api/fiat/admin/deposits?status=needs_review&limit=200", admin.Token).Decode(t, &queue)
	var listed map[string]any
	for _, it := range queue.Items {
		if it["depositId"] == secondID {
			listed = it
		}
	}
	if listed == nil || listed["paymentOf"] != depID || listed["paidAmount"] != 1_000_000.0 || listed["paidCurrency"] != "KZT" {
		t.Fatalf("the second payment in the review queue: %v", listed)
	}
	if r := p.Post(t, "/api/fiat/admin/deposits/"+secondID+"/credit", admin.Token, map[string]any{}); r.Status != 409 {
		t.Fatalf("credit of a second payment: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/admin/deposits/"+secondID+"/refund", admin.Token, map[string]any{"reason": "double charge"}); r.Status != 200 ||
		r.JSON(t)["status"] != "refunded" {
		t.Fatalf("refund of a second payment: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/admin/deposits/"+secondID+"/refund", admin.Token, map[string]any{}); r.Status != 409 {
		t.Fatalf("second refund of a second payment: %d %s", r.Status, r.Body)
	}
	if b := fiatBalance(t, p, alice, aw); b != 1_000_000 {
		t.Fatalf("balance after deposit = %d", b)
	}
	deps := p.Get(t, "/api/fiat/me/deposits", alice.Token)
	if deps.Status != 200 || !bytes.Contains(deps.Body, []byte(`"status":"completed"`)) {
		t.Fatalf("me/deposits: %d %s", deps.Status, deps.Body)
	}

	// Transfer with an Idempotency-Key: a retry answers byte for byte.
	body := map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 100_000, "memo": "rent"}
	key := map[string]string{"Idempotency-Key": "k-" + ksuid.New().String()}
	tr := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: alice.Token, Body: body, Headers: key})
	if tr.Status != 200 {
		t.Fatalf("transfer: %d %s", tr.Status, tr.Body)
	}
	res := tr.JSON(t)
	if res["feeKzt"] != float64(100) || res["fromBalanceKzt"] != float64(1_000_000-100_100) || res["toBalanceKzt"] != float64(100_000) ||
		res["transactionId"] == "" || res["createdAt"] == "" {
		t.Fatalf("transfer = %v", res)
	}
	again := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: alice.Token, Body: body, Headers: key})
	if again.Status != 200 || !bytes.Equal(again.Body, tr.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s %v", again.Status, again.Body, again.Header)
	}
	body2 := map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 5, "memo": "rent"}
	if r := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/transfer", Token: alice.Token, Body: body2, Headers: key}); r.Status != 409 ||
		r.JSON(t)["error"] != "idempotency_key_reused" {
		t.Fatalf("reused key: %d %s", r.Status, r.Body)
	}
	// Bob's KZT wallet was created on demand.
	bw := p.Get(t, "/api/fiat/wallets", bob.Token)
	var bws struct {
		Items []struct {
			ID      string `json:"id"`
			Balance int64  `json:"balance"`
		} `json:"items"`
	}
	bw.Decode(t, &bws)
	if len(bws.Items) != 1 || bws.Items[0].Balance != 100_000 {
		t.Fatalf("bob wallets = %s", bw.Body)
	}
	bobWallet := bws.Items[0].ID

	bad := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"insufficient incl. fee", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 899_900}, 400, "insufficient_balance"},
		{"self", map[string]any{"fromWalletId": aw, "toEmail": alice.Email, "amountKzt": 1}, 422, "validation_failed"},
		{"unknown recipient", map[string]any{"fromWalletId": aw, "toEmail": "ghost-" + ksuid.New().String() + "@example.com", "amountKzt": 1}, 404, "recipient_not_found"},
		{"zero", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 0}, 422, "validation_failed"},
		{"negative", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": -5}, 422, "validation_failed"},
		{"fraction", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 1.5}, 422, "validation_failed"},
		{"string", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": "100"}, 422, "validation_failed"},
		{"oversized", []byte(`{"fromWalletId":"` + aw + `","toEmail":"` + bob.Email + `","amountKzt":99999999999999999999999}`), 422, "validation_failed"},
		{"missing amount", map[string]any{"fromWalletId": aw, "toEmail": bob.Email}, 422, "validation_failed"},
		{"long memo", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 1, "memo": strings.Repeat("m", 501)}, 422, "validation_failed"},
		{"other's wallet", map[string]any{"fromWalletId": bobWallet, "toEmail": bob.Email, "amountKzt": 1}, 404, "wallet_not_found"},
		{"over per-transfer cap", map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 10_000_001}, 403, "kyc_required"},
		{"not JSON", []byte(`nope`), 400, "invalid_json"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, "/api/fiat/transfer", alice.Token, tt.body)
			if r.Status != tt.status || r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	// The alias field works.
	if r := p.Post(t, "/api/fiat/transfer", alice.Token, map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amount": 1000}); r.Status != 200 ||
		r.JSON(t)["feeKzt"] != float64(1) || r.JSON(t)["currency"] != "KZT" {
		t.Fatalf("alias: %d %s", r.Status, r.Body)
	}
	// Both names with different sums: refused naming both, nothing moved
	// (it once moved amountKzt silently).
	before := fiatBalance(t, p, alice, aw)
	r := p.Post(t, "/api/fiat/transfer", alice.Token, map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amount": 100, "amountKzt": 200})
	var conflict struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	r.Decode(t, &conflict)
	if r.Status != 422 || conflict.Error != "validation_failed" || conflict.Fields["amount"] == "" || conflict.Fields["amountKzt"] == "" {
		t.Fatalf("amount 100 and amountKzt 200: %d %s, want 422 naming both", r.Status, r.Body)
	}
	if b := fiatBalance(t, p, alice, aw); b != before {
		t.Fatalf("a refused transfer moved money: %d -> %d", before, b)
	}

	// Withdraw.
	wd := p.Do(t, harness.Request{Method: "POST", Path: "/api/fiat/withdraw", Token: alice.Token,
		Body: map[string]any{"walletId": aw, "amount": 50_000, "destination": "KZ00 1234"}, Headers: map[string]string{"Idempotency-Key": "w1"}})
	if wd.Status != 201 || wd.JSON(t)["withdrawalId"] == "" || wd.JSON(t)["balance"] != float64(1_000_000-100_100-1001-50_000) {
		t.Fatalf("withdraw: %d %s", wd.Status, wd.Body)
	}

	// Payouts: held at once; reject releases, approve pays.
	balBefore := fiatBalance(t, p, alice, aw)
	po := p.Post(t, "/api/fiat/payouts", alice.Token, map[string]any{"walletId": aw, "amount": 10_000, "bankAccount": "KZ11"})
	if po.Status != 201 || po.JSON(t)["status"] != "pending_review" {
		t.Fatalf("payout: %d %s", po.Status, po.Body)
	}
	if b := fiatBalance(t, p, alice, aw); b != balBefore-10_000 {
		t.Fatalf("held balance = %d", b)
	}
	poID := po.JSON(t)["id"].(string)
	if r := p.Post(t, "/api/fiat/admin/payouts/"+poID+"/reject", alice.Token, map[string]any{}); r.Status != 403 {
		t.Fatalf("non-admin reject: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/admin/payouts/"+poID+"/reject", admin.Token, map[string]any{}); r.Status != 200 || r.JSON(t)["status"] != "rejected" {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	if b := fiatBalance(t, p, alice, aw); b != balBefore {
		t.Fatalf("released balance = %d, want %d", b, balBefore)
	}
	po2 := p.Post(t, "/api/fiat/payouts", alice.Token, map[string]any{"walletId": aw, "amount": 10_000, "bankAccount": "KZ11"})
	po2ID := po2.JSON(t)["id"].(string)
	if r := p.Post(t, "/api/fiat/admin/payouts/"+po2ID+"/approve", admin.Token, map[string]any{}); r.Status != 200 || r.JSON(t)["status"] != "paid" {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/admin/payouts/"+po2ID+"/reject", admin.Token, map[string]any{}); r.Status != 409 {
		t.Fatalf("reject after approve: %d %s", r.Status, r.Body)
	}

	// Freeze: money can move neither from nor to the wallet.
	if r := p.Post(t, "/api/fiat/admin/wallets/"+bobWallet+"/freeze", admin.Token, map[string]any{}); r.Status != 200 || r.JSON(t)["status"] != "frozen" {
		t.Fatalf("freeze: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/transfer", alice.Token, map[string]any{"fromWalletId": aw, "toEmail": bob.Email, "amountKzt": 1}); r.Status != 400 ||
		r.JSON(t)["error"] != "wallet_inactive" {
		t.Fatalf("to frozen: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/withdraw", bob.Token, map[string]any{"walletId": bobWallet, "amount": 1, "destination": "x"}); r.Status != 400 ||
		r.JSON(t)["error"] != "wallet_inactive" {
		t.Fatalf("from frozen: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/admin/wallets/"+bobWallet+"/unfreeze", admin.Token, map[string]any{}); r.Status != 200 {
		t.Fatalf("unfreeze: %d %s", r.Status, r.Body)
	}

	// KYC lifts the per-transfer cap.
	k := p.Post(t, "/api/fiat/kyc/submit", alice.Token, map[string]string{"fullName": "Alice A", "documentType": "passport",
		"documentNumber": "N123", "country": "KZ"})
	if k.Status != 201 || k.JSON(t)["status"] != "pending" {
		t.Fatalf("kyc: %d %s", k.Status, k.Body)
	}
	if r := p.Post(t, "/api/fiat/kyc/submit", alice.Token, map[string]string{"fullName": "Alice"}); r.Status != 422 {
		t.Fatalf("kyc missing fields: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/admin/kyc/"+k.JSON(t)["id"].(string)+"/approve", admin.Token, map[string]any{}); r.Status != 200 ||
		r.JSON(t)["status"] != "approved" {
		t.Fatalf("kyc approve: %d %s", r.Status, r.Body)
	}

	// History, CSV, dashboard, audit.
	ids := fiatHistory(t, p, alice)
	// deposit, two transfers, withdrawal, payout hold + release, payout hold.
	if len(ids) != 7 {
		t.Fatalf("history has %d rows, want 7: %v", len(ids), ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate %s in history", id)
		}
		seen[id] = true
	}
	if !seen[res["transactionId"].(string)] {
		t.Fatalf("transfer %s missing from history %v", res["transactionId"], ids)
	}
	page := p.Get(t, "/api/fiat/transactions?limit=2", alice.Token)
	if page.Status != 200 || page.JSON(t)["nextCursor"] == nil {
		t.Fatalf("page: %d %s", page.Status, page.Body)
	}
	csvResp := p.Get(t, "/api/fiat/transactions.csv", alice.Token)
	if csvResp.Status != 200 || !strings.HasPrefix(csvResp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %s", csvResp.Status, csvResp.Body)
	}
	recs, err := csv.NewReader(bytes.NewReader(csvResp.Body)).ReadAll()
	if err != nil || len(recs) != len(ids)+1 || recs[0][0] != "id" {
		t.Fatalf("csv rows = %d (%v), want %d:\n%s", len(recs), err, len(ids)+1, csvResp.Body)
	}
	dash := p.Get(t, "/api/fiat/me/dashboard", alice.Token)
	if dash.Status != 200 || dash.JSON(t)["kyc"].(map[string]any)["approved"] != true {
		t.Fatalf("dashboard: %d %s", dash.Status, dash.Body)
	}
	if r := p.Get(t, "/api/fiat/admin/audit", alice.Token); r.Status != 403 {
		t.Fatalf("audit non-admin: %d", r.Status)
	}
	audit := p.Get(t, "/api/fiat/admin/audit?limit=200", admin.Token)
	if audit.Status != 200 || !bytes.Contains(audit.Body, []byte("wallet.freeze")) || !bytes.Contains(audit.Body, []byte(`"transfer"`)) {
		t.Fatalf("audit: %d %s", audit.Status, audit.Body)
	}
}

func TestFiatProcessorVerifyAndCheckout(t *testing.T) {
	p := shared(t)
	secret := fiatSecret(t, p)
	u := p.Register(t, "fiat-verify")
	w := fiatCreateWallet(t, p, u, "USD")
	dep := p.Post(t, "/api/fiat/deposit/checkout", u.Token, map[string]any{"walletId": w, "amount": 2500})
	if dep.Status != 201 {
		t.Fatalf("checkout: %d %s", dep.Status, dep.Body)
	}
	depID := dep.JSON(t)["depositId"].(string)
	evID := "evt_" + ksuid.New().String()
	ev := fiatEvent(t, evID, depID, 2500, "usd")
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev, Secret: secret})
	body := map[string]any{"event_id": evID, "event_type": "payment_intent.succeeded", "raw_payload": string(ev),
		"processor_signature": signed.Header}

	if r := p.Post(t, "/api/fiat/processor/verify", "", body); r.Status != 401 {
		t.Fatalf("no token: %d", r.Status)
	}
	if r := p.Post(t, "/api/fiat/processor/verify", u.Token, map[string]any{"event_id": evID}); r.Status != 400 {
		t.Fatalf("missing fields: %d %s", r.Status, r.Body)
	}
	forged := map[string]any{"event_id": evID, "event_type": "payment_intent.succeeded", "raw_payload": string(ev),
		"processor_signature": "t=1,v1=deadbeef"}
	if r := p.Post(t, "/api/fiat/processor/verify", u.Token, forged); r.Status != 400 {
		t.Fatalf("forged: %d %s", r.Status, r.Body)
	}
	r := p.Post(t, "/api/fiat/processor/verify", u.Token, body)
	if r.Status != 200 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	v := r.JSON(t)
	if v["ok"] != true || v["anchored"] != true || v["ledger_id"] == nil || v["idempotent"] != false {
		t.Fatalf("verify = %v", v)
	}
	r2 := p.Post(t, "/api/fiat/processor/verify", u.Token, body)
	if r2.Status != 200 || r2.JSON(t)["idempotent"] != true || r2.JSON(t)["ledger_id"] != v["ledger_id"] {
		t.Fatalf("verify replay: %d %s", r2.Status, r2.Body)
	}
	if b := fiatBalance(t, p, u, w); b != 2500 {
		t.Fatalf("balance = %d", b)
	}
}

func TestFiatHealthAndOpenAPI(t *testing.T) {
	p := shared(t)
	h := p.Get(t, "/api/fiat/health", "")
	if h.Status != 200 || h.JSON(t)["database"] != "ok" {
		t.Fatalf("health: %d %s", h.Status, h.Body)
	}
	if _, ok := h.JSON(t)["activeWallets"]; !ok {
		t.Fatalf("health = %s", h.Body)
	}
	o := p.Get(t, "/api/fiat/openapi.json", "")
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(o.Body, &doc); err != nil || o.Status != 200 {
		t.Fatalf("openapi: %d %s", o.Status, o.Body)
	}
	for _, want := range []string{"/api/fiat/transfer", "/api/fiat/wallets/{id}/public", "/api/fiat/transactions.csv"} {
		if doc.Paths[want] == nil {
			t.Fatalf("openapi lacks %s", want)
		}
	}
	for path := range doc.Paths {
		if !strings.HasPrefix(path, "/api/fiat") {
			t.Fatalf("openapi has foreign path %s", path)
		}
	}
}
