package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

var virtualPanRE = regexp.MustCompile(`^vmask-[0-9a-f]{32}$`)

func TestMaskLifecycle(t *testing.T) {
	p := shared(t)
	alice, bob := p.Register(t, "mask-alice"), p.Register(t, "mask-bob")

	m := createMask(t, p, alice.Token, map[string]any{"label": "streaming", "kind": "merchant-locked",
		"lockedToMerchant": "Netflix", "currency": "USD", "spendLimitCents": 5_000, "expiresAt": futureISO(24 * time.Hour)})
	if m.ID == "" || !virtualPanRE.MatchString(m.VirtualPan) || m.RemainingCents != 5_000 || m.Status != "active" ||
		m.Kind != "merchant-locked" || m.LockedToMerchant != "Netflix" || m.Currency != "USD" || m.SpendLimitCents != 5_000 ||
		m.Label != "streaming" || m.UserID != alice.ID {
		t.Fatalf("created mask = %+v", m)
	}
	other := createMask(t, p, alice.Token, map[string]any{"label": "misc", "kind": "recurring", "spendLimitCents": 100})
	if other.VirtualPan == m.VirtualPan {
		t.Fatal("two masks share a virtual PAN")
	}

	// Lists are per owner.
	var list struct {
		Items      []maskView `json:"items"`
		NextCursor *string    `json:"nextCursor"`
	}
	p.Get(t, "/api/mask/masks", alice.Token).Decode(t, &list)
	if len(list.Items) != 2 || list.NextCursor != nil {
		t.Fatalf("alice's masks = %+v", list)
	}
	p.Get(t, "/api/mask/masks?limit=1", alice.Token).Decode(t, &list)
	if len(list.Items) != 1 || list.NextCursor == nil {
		t.Fatalf("first page = %+v", list)
	}
	p.Get(t, "/api/mask/masks?limit=1&cursor="+*list.NextCursor, alice.Token).Decode(t, &list)
	if len(list.Items) != 1 || list.NextCursor != nil {
		t.Fatalf("second page = %+v", list)
	}
	p.Get(t, "/api/mask/masks", bob.Token).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("bob sees %+v", list.Items)
	}

	// Authorized charge.
	r, c := postCharge(t, p, alice.Token, chargeBody(m.ID, "order-1", 1_500, "Netflix", "streaming"))
	if r.Status != http.StatusCreated || c.Status != "authorized" || c.ID == "" || c.MaskID != m.ID || c.PaymentRef != "order-1" ||
		c.AmountCents != 1_500 || c.Merchant != "Netflix" || c.MerchantCategory != "streaming" || c.Idempotent ||
		c.RiskScore != 5 || len(c.RiskFactors) != 1 || c.CreatedAt.IsZero() {
		t.Fatalf("charge: %d %s", r.Status, r.Body)
	}
	// Replay: the original charge, idempotent, 200.
	r2, c2 := postCharge(t, p, alice.Token, chargeBody(m.ID, "order-1", 1_500, "Netflix", "streaming"))
	if r2.Status != http.StatusOK || c2.ID != c.ID || !c2.Idempotent || c2.Status != "authorized" {
		t.Fatalf("replay: %d %s", r2.Status, r2.Body)
	}
	// Declined: another merchant.
	r, d := postCharge(t, p, alice.Token, chargeBody(m.ID, "order-2", 100, "Hulu", "streaming"))
	if r.Status != http.StatusPaymentRequired || d.Error != "charge_declined" || d.DeclineReason != "merchant_locked" ||
		d.Charge == nil || d.Charge.Status != "declined" || d.Charge.ID == "" {
		t.Fatalf("decline: %d %s", r.Status, r.Body)
	}
	if _, ok := r.JSON(t)["riskScore"]; !ok {
		t.Fatalf("decline without riskScore: %s", r.Body)
	}
	// A declined replay stays declined, with the same charge.
	r, d2 := postCharge(t, p, alice.Token, chargeBody(m.ID, "order-2", 100, "Hulu", "streaming"))
	if r.Status != http.StatusPaymentRequired || d2.Charge == nil || d2.Charge.ID != d.Charge.ID || !d2.Idempotent || !d2.Charge.Idempotent {
		t.Fatalf("declined replay: %d %s", r.Status, r.Body)
	}

	// Bob can neither charge nor revoke nor list alice's mask.
	if r, _ := postCharge(t, p, bob.Token, chargeBody(m.ID, "steal", 100, "Netflix", "")); r.Status != http.StatusNotFound {
		t.Fatalf("bob charges: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/mask/masks/"+m.ID+"/revoke", bob.Token, nil); r.Status != http.StatusNotFound {
		t.Fatalf("bob revokes: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/api/mask/charges?maskId="+m.ID, bob.Token); r.Status != http.StatusNotFound {
		t.Fatalf("bob lists charges: %d %s", r.Status, r.Body)
	}

	// Stats before revocation: 2 active masks, 1500 spent, 1 of 2 declined.
	var st map[string]any
	p.Get(t, "/api/mask/stats", alice.Token).Decode(t, &st)
	if st["activeMasks"] != 2.0 || st["totalSpendCents"] != 1500.0 || st["declineRate"] != 0.5 || st["meanRiskScore"] != 5.0 {
		t.Fatalf("stats = %v", st)
	}

	// Revoke: soft, later charges declined, no longer listed.
	r = p.Post(t, "/api/mask/masks/"+m.ID+"/revoke", alice.Token, nil)
	if r.Status != http.StatusOK || r.JSON(t)["status"] != "revoked" {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r, d := postCharge(t, p, alice.Token, chargeBody(m.ID, "order-3", 100, "Netflix", "")); r.Status != http.StatusPaymentRequired || d.DeclineReason != "mask_revoked" {
		t.Fatalf("charge after revoke: %d %s", r.Status, r.Body)
	}
	p.Get(t, "/api/mask/masks", alice.Token).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != other.ID {
		t.Fatalf("masks after revoke = %+v", list.Items)
	}

	// Charges of the mask: authorized, declined, declined; newest first.
	var charges struct {
		Items      []chargeView `json:"items"`
		NextCursor *string      `json:"nextCursor"`
	}
	p.Get(t, "/api/mask/charges?maskId="+m.ID, alice.Token).Decode(t, &charges)
	if len(charges.Items) != 3 || charges.NextCursor != nil {
		t.Fatalf("charges = %+v", charges)
	}
	var statuses []string
	for _, ch := range charges.Items {
		statuses = append(statuses, ch.Status)
	}
	if strings.Count(strings.Join(statuses, ","), "declined") != 2 {
		t.Fatalf("charge statuses = %v", statuses)
	}
	p.Get(t, "/api/mask/charges", bob.Token).Decode(t, &charges)
	if len(charges.Items) != 0 {
		t.Fatalf("bob sees charges %+v", charges.Items)
	}
	p.Get(t, "/api/mask/stats", alice.Token).Decode(t, &st)
	if st["activeMasks"] != 1.0 || st["charges"] != 3.0 || st["declinedCharges"] != 2.0 {
		t.Fatalf("stats after revoke = %v", st)
	}

	// The authorized charge reached the ledger: its mask:charge record on
	// ledger.append, and the chained entry through the ledger API.
	env := findRecord(t, p, topics.LedgerAppend, 20*time.Second, func(e schemas.Envelope) bool {
		if e.Type != schemas.TypeLedgerAppend {
			return false
		}
		a, err := schemas.DataAs[schemas.LedgerAppend](e)
		return err == nil && a.SourceID == c.ID
	})
	entry, _ := schemas.DataAs[schemas.LedgerAppend](env)
	if entry.Kind != schemas.LedgerKindMaskCharge || entry.AmountCents == nil || *entry.AmountCents != 1_500 ||
		entry.Currency != "USD" || entry.ActorUserID != alice.ID {
		t.Fatalf("ledger entry = %+v", entry)
	}
	var chained map[string]any
	harness.Eventually(t, 20*time.Second, "the mask:charge ledger entry", func() bool {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		p.Get(t, "/api/ledger/entries?kind=mask:charge&actorUserId="+alice.ID, "").Decode(t, &page)
		for _, e := range page.Items {
			if e["sourceId"] == c.ID {
				chained = e
			}
		}
		return chained != nil
	})
	if chained["kind"] != "mask:charge" || chained["amountCents"] != 1500.0 || chained["currency"] != "USD" || chained["hash"] == nil {
		t.Fatalf("chained entry = %v", chained)
	}
	// Only the authorized charge is on the ledger.
	var page struct {
		Items []map[string]any `json:"items"`
	}
	p.Get(t, "/api/ledger/entries?kind=mask:charge&actorUserId="+alice.ID, "").Decode(t, &page)
	if len(page.Items) != 1 {
		t.Fatalf("mask ledger entries of alice = %v", page.Items)
	}
	// And its event, which shows the virtual PAN world only.
	findRecord(t, p, topics.EventsMask, 20*time.Second, func(e schemas.Envelope) bool {
		return e.Type == schemas.TypeChargeAuthorized && strings.Contains(string(e.Data), c.ID)
	})
}

// TestMaskDeclineReasons drives every decline reason over HTTP.
func TestMaskDeclineReasons(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "mask-declines")
	decline := func(t *testing.T, body map[string]any, reason string) chargeView {
		t.Helper()
		r, d := postCharge(t, p, u.Token, body)
		if r.Status != http.StatusPaymentRequired || d.Error != "charge_declined" || d.DeclineReason != reason || d.Charge == nil {
			t.Fatalf("want %s: %d %s", reason, r.Status, r.Body)
		}
		return d
	}
	authorize := func(t *testing.T, body map[string]any) chargeView {
		t.Helper()
		r, c := postCharge(t, p, u.Token, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("want authorized: %d %s", r.Status, r.Body)
		}
		return c
	}

	t.Run("limit_exceeded", func(t *testing.T) {
		m := createMask(t, p, u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 1_000})
		decline(t, chargeBody(m.ID, "big", 1_001, "Shop", ""), "limit_exceeded")
	})
	t.Run("category_locked", func(t *testing.T) {
		m := createMask(t, p, u.Token, map[string]any{"kind": "category-locked", "lockedToCategory": "travel", "spendLimitCents": 1_000})
		decline(t, chargeBody(m.ID, "casino", 10, "Shop", "casino"), "category_locked")
		authorize(t, chargeBody(m.ID, "plane", 10, "Air", "Travel"))
	})
	t.Run("single_use_consumed", func(t *testing.T) {
		m := createMask(t, p, u.Token, map[string]any{"kind": "single-use", "spendLimitCents": 1_000})
		authorize(t, chargeBody(m.ID, "one", 10, "Shop", ""))
		decline(t, chargeBody(m.ID, "two", 10, "Shop", ""), "single_use_consumed")
	})
	t.Run("mask_expired", func(t *testing.T) {
		m := createMask(t, p, u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 1_000,
			"expiresAt": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
		time.Sleep(1600 * time.Millisecond)
		decline(t, chargeBody(m.ID, "late", 10, "Shop", ""), "mask_expired")
	})
	t.Run("risk_declined", func(t *testing.T) {
		m := createMask(t, p, u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 10_000})
		// First charge of a recurring mask: new merchant, 5 + 15.
		if c := authorize(t, chargeBody(m.ID, "r1", 10, "Shop", "")); c.RiskScore != 20 {
			t.Fatalf("first score %d", c.RiskScore)
		}
		authorize(t, chargeBody(m.ID, "r2", 10, "Shop", ""))
		authorize(t, chargeBody(m.ID, "r3", 10, "Shop", ""))
		// Velocity now: 5 + 30 = 35.
		if c := authorize(t, chargeBody(m.ID, "r4", 10, "Shop", "")); c.RiskScore != 35 {
			t.Fatalf("velocity score %d", c.RiskScore)
		}
		decline(t, chargeBody(m.ID, "too-big", 100_000, "Shop", ""), "limit_exceeded")
		// 5 + 25 (half the limit) + 30 + 20 (recent decline) = 80: hard decline.
		d := decline(t, chargeBody(m.ID, "risky", 5_000, "Shop", ""), "risk_declined")
		if d.Charge.RiskScore != 80 || len(d.Charge.RiskFactors) != 4 {
			t.Fatalf("risk decline: %+v", d.Charge)
		}
	})
}

// TestMaskRiskFlag checks that a charge scoring 70 or more flags the
// merchant's user with a mask-risk-flag reputation event of weight -2 —
// only a user holding an active merchant key, and at most once per (mask
// owner, merchant) and day.
func TestMaskRiskFlag(t *testing.T) {
	p := shared(t)
	u, merchant, victim := p.Register(t, "mask-flag"), p.Register(t, "mask-merchant"), p.Register(t, "mask-victim")
	if r := p.Post(t, "/api/fiat/merchant/keys", merchant.Token, map[string]any{"label": "shop"}); r.Status != http.StatusCreated {
		t.Fatalf("merchant key: %d %s", r.Status, r.Body)
	}
	m := createMask(t, p, u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 10_000})
	charge := func(ref string, amount int64, merchantUser string) (harness.Response, chargeView) {
		body := chargeBody(m.ID, ref, amount, "Shop", "")
		if merchantUser != "" {
			body["merchantUserId"] = merchantUser
		}
		return postCharge(t, p, u.Token, body)
	}
	// 5 + 25 (half the limit) + 15 (90% of the remaining) + 15 (new merchant) = 60: no flag.
	if r, c := charge("big", 9_000, merchant.ID); r.Status != http.StatusCreated || c.RiskScore != 60 {
		t.Fatalf("big: %d %s", r.Status, r.Body)
	}
	// 1000 left: over the limit, declined (5 + 25 + 15 = 45).
	if r, d := charge("over", 5_000, ""); r.Status != http.StatusPaymentRequired || d.DeclineReason != "limit_exceeded" || d.Charge.RiskScore != 45 {
		t.Fatalf("over: %d %s", r.Status, r.Body)
	}
	// Two small ones (5 + 20 recent decline) make three authorized in the last minute.
	for i := range 2 {
		if r, c := charge(uniqueRef("small", i), 1, ""); r.Status != http.StatusCreated || c.RiskScore != 25 {
			t.Fatalf("small %d: %d %s", i, r.Status, r.Body)
		}
	}
	// 998 left: 5 + 15 (950 >= 90% of 998) + 30 (velocity) + 20 (recent decline) = 70,
	// naming a user who holds no merchant key: not flagged.
	if r, c := charge("flag-victim", 950, victim.ID); r.Status != http.StatusCreated || c.RiskScore != 70 {
		t.Fatalf("victim charge: %d %s", r.Status, r.Body)
	}
	// 48 left: 45 scores 70 again, naming the key-holding merchant: flagged.
	r, c := charge("flag-me", 45, merchant.ID)
	if r.Status != http.StatusCreated || c.RiskScore != 70 {
		t.Fatalf("flag charge: %d %s", r.Status, r.Body)
	}
	byCharge := func(id string) func(schemas.Envelope) bool {
		return func(e schemas.Envelope) bool {
			ev, err := schemas.DataAs[schemas.ReputationEvent](e)
			return e.Type == schemas.TypeReputationEvent && err == nil && ev.Meta["chargeId"] == id
		}
	}
	env := findRecord(t, p, topics.ReputationCommands, 20*time.Second, byCharge(c.ID))
	ev, _ := schemas.DataAs[schemas.ReputationEvent](env)
	if ev.UserID != merchant.ID || ev.Kind != "mask-risk-flag" || ev.Weight != -2 || ev.SourceModule != "mask" || env.Key != merchant.ID {
		t.Fatalf("reputation event = %+v (key %s)", ev, env.Key)
	}
	// 3 left: a second flagged charge the same day names the merchant again;
	// the flag is charged once per (owner, merchant) a day (the abuse
	// budget, schemas.BudgetMaskRiskFlag), which the scores below show.
	r2, c2 := charge("flag-again", 3, merchant.ID)
	if r2.Status != http.StatusCreated || c2.RiskScore != 70 {
		t.Fatalf("second flag charge: %d %s", r2.Status, r2.Body)
	}

	// Events posted now land behind everything above on each user's
	// partition: the merchant ends at -2 + 1 (the repeat applied once) and
	// the victim at 0 + 1 (never flagged).
	for _, who := range []harness.User{merchant, victim} {
		r := p.Do(t, harness.Request{Method: "POST", Path: "/api/reputation/events",
			Headers: map[string]string{"X-Reputation-Service-Key": harness.ReputationServiceKey},
			Body:    map[string]any{"userId": who.ID, "kind": "probe", "sourceModule": "e2e", "weight": 1}})
		if r.Status != http.StatusCreated {
			t.Fatalf("probe event: %d %s", r.Status, r.Body)
		}
	}
	score := func(who harness.User) int64 {
		var me struct {
			Score int64 `json:"score"`
		}
		p.Get(t, "/api/reputation/me", who.Token).Decode(t, &me)
		return me.Score
	}
	harness.Eventually(t, 20*time.Second, "the merchant's score to be -1", func() bool { return score(merchant) == -1 })
	if s := score(victim); s != 1 {
		t.Fatalf("victim score = %d, want 1 (never flagged)", s)
	}
}

func TestMaskValidationAndAuth(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "mask-validation")
	tests := []struct {
		name   string
		path   string
		token  string
		body   any
		status int
		code   string
	}{
		{"no token", "/api/mask/masks", "", map[string]any{"kind": "recurring", "spendLimitCents": 1}, 401, "auth_required"},
		{"unknown kind", "/api/mask/masks", u.Token, map[string]any{"kind": "gold", "spendLimitCents": 1}, 422, "validation_failed"},
		{"merchant-locked without merchant", "/api/mask/masks", u.Token, map[string]any{"kind": "merchant-locked", "spendLimitCents": 1}, 422, "validation_failed"},
		{"category-locked without category", "/api/mask/masks", u.Token, map[string]any{"kind": "category-locked", "spendLimitCents": 1}, 422, "validation_failed"},
		{"string limit", "/api/mask/masks", u.Token, map[string]any{"kind": "recurring", "spendLimitCents": "100"}, 422, "validation_failed"},
		{"fractional limit", "/api/mask/masks", u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 1.5}, 422, "validation_failed"},
		{"zero limit", "/api/mask/masks", u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 0}, 422, "validation_failed"},
		{"past expiry", "/api/mask/masks", u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 1, "expiresAt": "2001-01-01T00:00:00Z"}, 422, "validation_failed"},
		{"bad expiry", "/api/mask/masks", u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 1, "expiresAt": "tomorrow"}, 422, "validation_failed"},
		{"bad currency", "/api/mask/masks", u.Token, map[string]any{"kind": "recurring", "spendLimitCents": 1, "currency": "dollars"}, 422, "validation_failed"},
		{"malformed JSON", "/api/mask/masks", u.Token, []byte(`{"kind":`), 400, "invalid_json"},
		{"charge without token", "/api/mask/charges", "", chargeBody("x", "r", 1, "m", ""), 401, "auth_required"},
		{"charge missing fields", "/api/mask/charges", u.Token, map[string]any{"amountCents": 1}, 422, "validation_failed"},
		{"negative charge", "/api/mask/charges", u.Token, chargeBody("x", "r", -5, "m", ""), 422, "validation_failed"},
		{"unknown mask", "/api/mask/charges", u.Token, chargeBody("no-such-mask", "r", 5, "m", ""), 404, "not_found"},
		{"revoke unknown mask", "/api/mask/masks/no-such-mask/revoke", u.Token, nil, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, tt.path, tt.token, tt.body)
			if r.Status != tt.status || r.JSON(t)["error"] != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	for _, path := range []string{"/api/mask/masks", "/api/mask/charges", "/api/mask/stats"} {
		if r := p.Get(t, path, ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("GET %s without token: %d", path, r.Status)
		}
	}
}

func TestMaskHealthAndOpenAPI(t *testing.T) {
	p := shared(t)
	r := p.Get(t, "/api/mask/health", "")
	if r.Status != http.StatusOK || r.JSON(t)["database"] != "ok" {
		t.Fatalf("health: %d %s", r.Status, r.Body)
	}
	r = p.Get(t, "/api/mask/openapi.json", "")
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || r.Status != http.StatusOK {
		t.Fatalf("openapi: %d %s", r.Status, r.Body)
	}
	want := map[string][]string{
		"/api/mask/health": {"get"}, "/api/mask/openapi.json": {"get"}, "/api/mask/masks": {"get", "post"},
		"/api/mask/masks/{id}/revoke": {"post"}, "/api/mask/charges": {"get", "post"}, "/api/mask/stats": {"get"},
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") || len(doc.Paths) != len(want) {
		t.Fatalf("openapi %s paths %v", doc.OpenAPI, doc.Paths)
	}
	for path, methods := range want {
		for _, m := range methods {
			if doc.Paths[path][m] == nil {
				t.Fatalf("openapi lacks %s %s", m, path)
			}
		}
	}
}

// TestMaskCreateIdempotencyKey: the same Idempotency-Key and body return
// the first mask; another body with that key is 409.
func TestMaskCreateIdempotencyKey(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "mask-idem")
	body := map[string]any{"label": "once", "kind": "recurring", "spendLimitCents": 700}
	post := func(b map[string]any) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/mask/masks", Token: u.Token, Body: b,
			Headers: map[string]string{"Idempotency-Key": "mask-key-1"}})
	}
	first := post(body)
	again := post(body)
	if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) ||
		again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	body["spendLimitCents"] = 800
	if r := post(body); r.Status != http.StatusConflict || r.JSON(t)["error"] != "idempotency_key_reused" {
		t.Fatalf("other body: %d %s", r.Status, r.Body)
	}
	var list struct{ Items []maskView }
	p.Get(t, "/api/mask/masks", u.Token).Decode(t, &list)
	if len(list.Items) != 1 {
		t.Fatalf("masks = %+v", list.Items)
	}
}
