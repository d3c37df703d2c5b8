package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// commerceEvent reads events.fiat from the start until match accepts an
// envelope of type typ, or fails after timeout.
func commerceEvent(t *testing.T, p *harness.Platform, typ string, timeout time.Duration, match func(data map[string]any) bool) map[string]any {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.ConsumeTopics("events.fiat"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		var found map[string]any
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var env schemas.Envelope
			if found != nil || json.Unmarshal(r.Value, &env) != nil || env.Type != typ {
				return
			}
			var data map[string]any
			if json.Unmarshal(env.Data, &data) == nil && match(data) {
				found = data
			}
		})
		if found != nil {
			return found
		}
	}
	t.Fatalf("no %s event on events.fiat within %s", typ, timeout)
	return nil
}

// commerceFunded registers a user with a KZT wallet topped up by amount.
func commerceFunded(t *testing.T, p *harness.Platform, prefix string, amount int64) (harness.User, string) {
	t.Helper()
	u := p.Register(t, prefix)
	w := fiatCreateWallet(t, p, u, "KZT")
	if amount > 0 {
		fiatDeposit(t, p, fiatSecret(t, p), u, w, amount)
	}
	return u, w
}

func commerceCharge(t *testing.T, p *harness.Platform, key string, body map[string]any) harness.Response {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h["X-API-Key"] = key
	}
	return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/fiat/merchant/charge", Body: body, Headers: h})
}

func wantError(t *testing.T, r harness.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d %s: %s", r.Status, status, code, r.Body)
	}
	if got := r.JSON(t)["error"]; got != code {
		t.Fatalf("error %v, want %s: %s", got, code, r.Body)
	}
}

var merchantKeyRE = regexp.MustCompile(`^mk_live_[0-9a-f]{32}$`)

func TestFiatCommerceMerchantKeys(t *testing.T) {
	p := shared(t)
	m := p.Register(t, "merchant-keys")
	other := p.Register(t, "merchant-other")

	var keys []map[string]any
	for i := 0; i < 3; i++ {
		r := p.Post(t, "/api/fiat/merchant/keys", m.Token, map[string]string{"label": "shop <b>" + strconv.Itoa(i) + "</b>"})
		if r.Status != http.StatusCreated {
			t.Fatalf("key %d: %d %s", i, r.Status, r.Body)
		}
		k := r.JSON(t)
		if !merchantKeyRE.MatchString(k["key"].(string)) || k["id"] == "" || k["createdAt"] == "" {
			t.Fatalf("key %d: %s", i, r.Body)
		}
		keys = append(keys, k)
	}
	wantError(t, p.Post(t, "/api/fiat/merchant/keys", m.Token, map[string]string{"label": "fourth"}), http.StatusTooManyRequests, "key_limit_reached")

	list := p.Get(t, "/api/fiat/merchant/keys", m.Token)
	if list.Status != http.StatusOK {
		t.Fatalf("list keys: %d %s", list.Status, list.Body)
	}
	for _, k := range keys {
		if regexp.MustCompile(k["key"].(string)).Match(list.Body) {
			t.Fatalf("listing shows a plaintext key: %s", list.Body)
		}
	}

	// Concurrent creations cannot pass the limit.
	racer := p.Register(t, "merchant-racer")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = p.Post(t, "/api/fiat/merchant/keys", racer.Token, map[string]string{"label": "race"}).Status
		}()
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		if st == http.StatusCreated {
			created++
		} else if st != http.StatusTooManyRequests {
			t.Fatalf("concurrent key creation answered %d", st)
		}
	}
	if created != 3 {
		t.Fatalf("%d keys created concurrently, want 3", created)
	}

	first := keys[0]
	del := func(u harness.User, id string) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/fiat/merchant/keys/" + id, Token: u.Token})
	}
	wantError(t, del(other, first["id"].(string)), http.StatusNotFound, "not_found")
	if r := del(m, first["id"].(string)); r.Status != http.StatusOK || r.JSON(t)["status"] != "revoked" {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	body := map[string]any{"walletId": "w", "amount": 100, "paymentRef": "ref-1"}
	wantError(t, commerceCharge(t, p, first["key"].(string), body), http.StatusUnauthorized, "key_invalid")
	wantError(t, commerceCharge(t, p, "", body), http.StatusUnauthorized, "key_invalid")
	wantError(t, commerceCharge(t, p, "mk_live_nothex", body), http.StatusUnauthorized, "key_invalid")
	wantError(t, commerceCharge(t, p, "mk_live_00000000000000000000000000000000", body), http.StatusUnauthorized, "key_invalid")

	// The OpenAPI slice is generated from the registered routes.
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	p.Get(t, "/api/fiat/openapi.json", "").Decode(t, &doc)
	for path, method := range map[string]string{"/api/fiat/merchant/keys/{id}": "delete", "/api/fiat/merchant/charge": "post",
		"/api/fiat/requests/{token}": "get", "/api/fiat/requests/{token}/pay": "post", "/api/fiat/admin/reconcile": "get",
		"/api/fiat/merchant/authorizations": "post"} {
		if doc.Paths[path][method] == nil {
			t.Errorf("openapi.json lacks %s %s", method, path)
		}
	}

	// A revoked key frees a slot.
	if r := p.Post(t, "/api/fiat/merchant/keys", m.Token, map[string]string{"label": "replacement"}); r.Status != http.StatusCreated {
		t.Fatalf("key after revoke: %d %s", r.Status, r.Body)
	}
}

func TestFiatCommerceCharge(t *testing.T) {
	p := shared(t)
	cust, custWallet := commerceFunded(t, p, "charge-customer", 100_000)
	merchant := p.Register(t, "charge-merchant")
	kr := p.Post(t, "/api/fiat/merchant/keys", merchant.Token, map[string]string{"label": "shop"})
	if kr.Status != http.StatusCreated {
		t.Fatalf("key: %d %s", kr.Status, kr.Body)
	}
	key := kr.JSON(t)
	apiKey, keyID := key["key"].(string), key["id"].(string)

	order1 := map[string]any{"walletId": custWallet, "amount": 25_000, "paymentRef": "order-1", "description": "2 books"}
	wantError(t, commerceCharge(t, p, apiKey, order1), http.StatusForbidden, "charge_not_authorized")

	ar := p.Post(t, "/api/fiat/merchant/authorizations", cust.Token,
		map[string]any{"walletId": custWallet, "merchantKeyId": keyID, "maxAmount": 60_000})
	if ar.Status != http.StatusCreated || ar.JSON(t)["remaining"] != float64(60_000) {
		t.Fatalf("authorize: %d %s", ar.Status, ar.Body)
	}

	r := commerceCharge(t, p, apiKey, order1)
	if r.Status != http.StatusCreated {
		t.Fatalf("charge: %d %s", r.Status, r.Body)
	}
	ch := r.JSON(t)
	if ch["idempotent"] != false || ch["amount"] != float64(25_000) || ch["fee"] != float64(25) || ch["netAmount"] != float64(24_975) {
		t.Fatalf("charge body: %s", r.Body)
	}
	merchantWallet := ch["merchantWalletId"].(string)
	if got := fiatBalance(t, p, cust, custWallet); got != 75_000 {
		t.Fatalf("customer balance %d, want 75000", got)
	}
	if got := fiatBalance(t, p, merchant, merchantWallet); got != 24_975 {
		t.Fatalf("merchant balance %d, want 24975", got)
	}

	replay := commerceCharge(t, p, apiKey, order1)
	if replay.Status != http.StatusOK {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	rb := replay.JSON(t)
	if rb["idempotent"] != true || rb["chargeId"] != ch["chargeId"] || rb["transactionId"] != ch["transactionId"] {
		t.Fatalf("replay body %s, original %s", replay.Body, r.Body)
	}
	if got := fiatBalance(t, p, cust, custWallet); got != 75_000 {
		t.Fatalf("customer balance after replay %d, want 75000", got)
	}
	changed := map[string]any{"walletId": custWallet, "amount": 1, "paymentRef": "order-1"}
	wantError(t, commerceCharge(t, p, apiKey, changed), http.StatusConflict, "idempotency_key_reused")

	// 35,000 of the 60,000 authorized remain.
	wantError(t, commerceCharge(t, p, apiKey, map[string]any{"walletId": custWallet, "amount": 40_000, "paymentRef": "order-2"}),
		http.StatusForbidden, "authorization_exceeded")
	wantError(t, commerceCharge(t, p, apiKey, map[string]any{"walletId": custWallet, "amount": "12", "paymentRef": "order-3"}),
		http.StatusUnprocessableEntity, "validation_failed")

	// The same charge sent twice at once settles once; one answer is the
	// replay.
	order4 := map[string]any{"walletId": custWallet, "amount": 1_000, "paymentRef": "order-4"}
	var wg sync.WaitGroup
	both := make([]harness.Response, 2)
	for i := range both {
		wg.Add(1)
		go func() { defer wg.Done(); both[i] = commerceCharge(t, p, apiKey, order4) }()
	}
	wg.Wait()
	if both[0].Status+both[1].Status != http.StatusCreated+http.StatusOK {
		t.Fatalf("concurrent same charge: %d %s / %d %s", both[0].Status, both[0].Body, both[1].Status, both[1].Body)
	}
	if a, b := both[0].JSON(t), both[1].JSON(t); a["chargeId"] != b["chargeId"] || a["idempotent"] == b["idempotent"] {
		t.Fatalf("concurrent answers differ: %s / %s", both[0].Body, both[1].Body)
	}
	if got := fiatBalance(t, p, cust, custWallet); got != 74_000 {
		t.Fatalf("customer balance after the concurrent pair %d, want 74000", got)
	}

	ev := commerceEvent(t, p, "merchant.charge.success", 20*time.Second, func(d map[string]any) bool {
		return d["chargeId"] == ch["chargeId"]
	})
	if ev["amount"] != float64(25_000) || ev["paymentRef"] != "order-1" || ev["customerWalletId"] != custWallet {
		t.Fatalf("event: %v", ev)
	}
}

func createRequest(t *testing.T, p *harness.Platform, u harness.User, body map[string]any) map[string]any {
	t.Helper()
	r := p.Post(t, "/api/fiat/requests", u.Token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create request: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

func TestFiatCommercePaymentRequests(t *testing.T) {
	p := shared(t)
	recv, recvWallet := commerceFunded(t, p, "req-receiver", 0)
	payer, payerWallet := commerceFunded(t, p, "req-payer", 50_000)

	t.Run("expires by views", func(t *testing.T) {
		req := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 5000, "description": "dinner", "maxViews": 3})
		token := req["token"].(string)
		if req["payUrl"] != p.BaseURL+"/api/fiat/requests/"+token || req["maxViews"] != float64(3) || req["expiresAt"] == "" {
			t.Fatalf("create: %v", req)
		}
		for i, want := range []string{"open", "open", "expired"} {
			r := p.Get(t, "/api/fiat/requests/"+token, "")
			if r.Status != http.StatusOK {
				t.Fatalf("view %d: %d %s", i+1, r.Status, r.Body)
			}
			if v := r.JSON(t); v["views"] != float64(i+1) || v["status"] != want {
				t.Fatalf("view %d: %s", i+1, r.Body)
			}
		}
		wantError(t, p.Get(t, "/api/fiat/requests/"+token, ""), http.StatusGone, "request_expired")
		page := p.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/fiat/requests/" + token,
			Headers: map[string]string{"Accept": "text/html"}})
		if page.Status != http.StatusGone || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("expired pay page: %d %s", page.Status, page.Header.Get("Content-Type"))
		}
		ev := commerceEvent(t, p, "request.expired", 20*time.Second, func(d map[string]any) bool { return d["token"] == token })
		if ev["reason"] != "views" || ev["views"] != float64(3) {
			t.Fatalf("event: %v", ev)
		}
		wantError(t, p.Post(t, "/api/fiat/requests/"+token+"/pay", payer.Token, map[string]string{"walletId": payerWallet}),
			http.StatusBadRequest, "request_expired")
	})

	t.Run("pay, own, paid", func(t *testing.T) {
		req := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 5000, "description": "tickets"})
		token := req["token"].(string)
		if req["maxViews"] != float64(100) {
			t.Fatalf("default maxViews: %v", req)
		}
		dash := p.Get(t, "/api/fiat/me/dashboard", recv.Token)
		if dash.Status != http.StatusOK || !regexp.MustCompile(token).Match(dash.Body) {
			t.Fatalf("dashboard lacks the open request: %d %s", dash.Status, dash.Body)
		}
		pay := func(u harness.User, wallet string) harness.Response {
			return p.Post(t, "/api/fiat/requests/"+token+"/pay", u.Token, map[string]string{"walletId": wallet})
		}
		wantError(t, pay(recv, recvWallet), http.StatusBadRequest, "cannot_pay_own_request")
		r := pay(payer, payerWallet)
		if r.Status != http.StatusOK {
			t.Fatalf("pay: %d %s", r.Status, r.Body)
		}
		if b := r.JSON(t); b["status"] != "paid" || b["feeKzt"] != float64(5) {
			t.Fatalf("pay body: %s", r.Body)
		}
		if got := fiatBalance(t, p, payer, payerWallet); got != 50_000-5005 {
			t.Fatalf("payer balance %d", got)
		}
		if got := fiatBalance(t, p, recv, recvWallet); got != 5000 {
			t.Fatalf("receiver balance %d", got)
		}
		wantError(t, pay(payer, payerWallet), http.StatusBadRequest, "request_paid")
		if v := p.Get(t, "/api/fiat/requests/"+token, ""); v.Status != http.StatusOK || v.JSON(t)["status"] != "paid" {
			t.Fatalf("view paid: %d %s", v.Status, v.Body)
		}
		commerceEvent(t, p, "request.paid", 20*time.Second, func(d map[string]any) bool {
			return d["token"] == token && d["payerWalletId"] == payerWallet
		})
		wantError(t, p.Get(t, "/api/fiat/requests/pr_00000000000000000000000000000000", ""), http.StatusNotFound, "request_not_found")
	})

	t.Run("expires by time without anyone looking", func(t *testing.T) {
		req := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 700, "expiresInSeconds": 1})
		token := req["token"].(string)
		start := time.Now()
		ev := commerceEvent(t, p, "request.expired", 20*time.Second, func(d map[string]any) bool { return d["token"] == token })
		if ev["reason"] != "time" || ev["views"] != float64(0) {
			t.Fatalf("event: %v", ev)
		}
		t.Logf("request.expired arrived %s after creation (expiresInSeconds 1)", time.Since(start).Round(10*time.Millisecond))
		wantError(t, p.Post(t, "/api/fiat/requests/"+token+"/pay", payer.Token, map[string]string{"walletId": payerWallet}),
			http.StatusBadRequest, "request_expired")
		wantError(t, p.Get(t, "/api/fiat/requests/"+token, ""), http.StatusGone, "request_expired")
	})

	t.Run("two payers race: exactly one pays", func(t *testing.T) {
		req := createRequest(t, p, recv, map[string]any{"walletId": recvWallet, "amount": 1000})
		token := req["token"].(string)
		payer2, payer2Wallet := commerceFunded(t, p, "req-payer2", 5000)
		var wg sync.WaitGroup
		results := make([]harness.Response, 2)
		for i, pw := range []struct {
			u harness.User
			w string
		}{{payer, payerWallet}, {payer2, payer2Wallet}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = p.Post(t, "/api/fiat/requests/"+token+"/pay", pw.u.Token, map[string]string{"walletId": pw.w})
			}()
		}
		wg.Wait()
		paid, refused := 0, 0
		for _, r := range results {
			switch {
			case r.Status == http.StatusOK:
				paid++
			case r.Status == http.StatusBadRequest && r.JSON(t)["error"] == "request_paid":
				refused++
			default:
				t.Fatalf("race answer: %d %s", r.Status, r.Body)
			}
		}
		if paid != 1 || refused != 1 {
			t.Fatalf("paid %d, refused %d", paid, refused)
		}
	})

	t.Run("validation", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"walletId": recvWallet, "amount": 0},
			{"walletId": recvWallet, "amount": 10, "maxViews": 0},
			{"walletId": recvWallet, "amount": 10, "expiresInSeconds": -5},
			{"walletId": recvWallet, "amount": 10, "expiresInSeconds": "soon"},
		} {
			wantError(t, p.Post(t, "/api/fiat/requests", recv.Token, body), http.StatusUnprocessableEntity, "validation_failed")
		}
		wantError(t, p.Post(t, "/api/fiat/requests", payer.Token, map[string]any{"walletId": recvWallet, "amount": 10}),
			http.StatusNotFound, "wallet_not_found")
	})
}

// alertSink records the signed reconciliation alerts it receives.
type alertSink struct {
	mu     sync.Mutex
	secret string
	got    []map[string]any
	bad    []string
}

func (s *alertSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ts := r.Header.Get("X-Platform-Timestamp")
	m := hmac.New(sha256.New, []byte(s.secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(r.Header.Get("X-Platform-Signature"))) {
		s.bad = append(s.bad, string(body))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var v map[string]any
	_ = json.Unmarshal(body, &v)
	s.got = append(s.got, v)
	w.WriteHeader(http.StatusNoContent)
}

func (s *alertSink) received() ([]map[string]any, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.got...), append([]string(nil), s.bad...)
}

type reconcileReport struct {
	OK         bool   `json:"ok"`
	Source     string `json:"source"`
	Currencies []struct {
		Currency               string `json:"currency"`
		ProcessorCreditedMinor int64  `json:"processorCreditedMinor"`
		DepositsCreditedMinor  int64  `json:"depositsCreditedMinor"`
		WalletBalancesMinor    int64  `json:"walletBalancesMinor"`
		FeesMinor              int64  `json:"feesMinor"`
		Drift                  int64  `json:"drift"`
		ProcessorDrift         int64  `json:"processorDrift"`
	} `json:"currencies"`
	Alert *struct {
		Sent bool `json:"sent"`
	} `json:"alert"`
}

func TestFiatCommerceReconcile(t *testing.T) {
	sink := &alertSink{secret: "reconcile-alert-secret-0123456789"}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"RECONCILE_ALERT_URL": srv.URL + "/alerts", "RECONCILE_ALERT_SECRET": sink.secret,
	}})
	admin := p.RegisterEmail(t, harness.FiatAdminEmail)
	cust, custWallet := commerceFunded(t, p, "rec-customer", 80_000)
	other, otherWallet := commerceFunded(t, p, "rec-other", 0)
	_ = otherWallet
	if r := p.Post(t, "/api/fiat/transfer", cust.Token, map[string]any{"fromWalletId": custWallet, "toEmail": other.Email, "amountKzt": 10_000}); r.Status != http.StatusOK {
		t.Fatalf("transfer: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/withdraw", cust.Token, map[string]any{"walletId": custWallet, "amount": 3_000, "destination": "IBAN KZ00"}); r.Status != http.StatusCreated {
		t.Fatalf("withdraw: %d %s", r.Status, r.Body)
	}
	wantError(t, p.Get(t, "/api/fiat/admin/reconcile", cust.Token), http.StatusForbidden, "forbidden")

	get := func(query string) reconcileReport {
		t.Helper()
		r := p.Get(t, "/api/fiat/admin/reconcile"+query, admin.Token)
		if r.Status != http.StatusOK {
			t.Fatalf("reconcile%s: %d %s", query, r.Status, r.Body)
		}
		var rep reconcileReport
		r.Decode(t, &rep)
		return rep
	}
	kzt := func(rep reconcileReport) int {
		for i, c := range rep.Currencies {
			if c.Currency == "KZT" {
				return i
			}
		}
		t.Fatalf("no KZT line: %+v", rep)
		return -1
	}
	rep := get("")
	k := rep.Currencies[kzt(rep)]
	if !rep.OK || rep.Source != "postgres" || k.Drift != 0 || k.ProcessorCreditedMinor != 80_000 || k.DepositsCreditedMinor != 80_000 ||
		k.WalletBalancesMinor != 77_000 || k.FeesMinor != 10 || rep.Alert != nil {
		t.Fatalf("clean books: %+v", rep)
	}

	t.Run("clickhouse gives the same answer once the sink caught up", func(t *testing.T) {
		deadline := time.Now().Add(30 * time.Second)
		var last string
		for time.Now().Before(deadline) {
			r := p.Get(t, "/api/fiat/admin/reconcile?source=clickhouse", admin.Token)
			if r.Status == http.StatusOK {
				var ch reconcileReport
				r.Decode(t, &ch)
				c := ch.Currencies[kzt(ch)]
				if ch.Source == "clickhouse" && c.ProcessorCreditedMinor == k.ProcessorCreditedMinor && ch.OK == rep.OK &&
					c.Drift == k.Drift && c.ProcessorDrift == k.ProcessorDrift {
					return
				}
			}
			last = strconv.Itoa(r.Status) + " " + string(r.Body)
			time.Sleep(500 * time.Millisecond)
		}
		if regexp.MustCompile(`analytics_unavailable`).MatchString(last) {
			t.Fatalf("the ClickHouse sink did not serve the events in time: %s", last)
		}
		t.Fatalf("clickhouse answer never matched postgres; last: %s", last)
	})

	conn, err := pgx.Connect(context.Background(), p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE fiat_wallets SET balance = balance - 250 WHERE id = $1`, custWallet); err != nil {
		t.Fatal(err)
	}
	rep = get("")
	k = rep.Currencies[kzt(rep)]
	if rep.OK || k.Drift != 250 || rep.Alert == nil || !rep.Alert.Sent {
		t.Fatalf("tampered books: %+v", rep)
	}
	got, bad := sink.received()
	if len(bad) > 0 || len(got) != 1 {
		t.Fatalf("alerts: %d verified, %d with bad signatures", len(got), len(bad))
	}
	if got[0]["type"] != "reconcile.drift" {
		t.Fatalf("alert: %v", got[0])
	}
	// The drift is a series too: the ReconcileDrift alert of
	// deploy/prometheus/alerts.yml reads it.
	resp, err := http.Get("http://" + p.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := `platform_reconcile_drift_minor{currency="KZT",kind="balances"} 250`; !strings.Contains(string(metrics), want) {
		t.Fatalf("metrics lack %s", want)
	}
}
