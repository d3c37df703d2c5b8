package e2e

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
)

// TestAbuseBudgetsPerIP runs its own platform with the abuse budgets on
// (ABUSE_BUDGETS=1) and shows that free sign-ups behind one address do not
// multiply per-account budgets: proposals stop at the IP budget although
// each account is within its own, AI calls stop at the IP budget although
// each account is within its monthly cap, a user holds at most 3 partner
// keys, and the partner API's rate is charged per key and per IP. Every
// refusal is 429 (rate_limited with Retry-After, key_limit_reached as for
// merchant keys).
func TestAbuseBudgetsPerIP(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"ABUSE_BUDGETS": "1", "AI_MONTHLY_LIMIT": "100",
		"RATE_LIMIT_PARTNER": "100", "RATE_LIMIT_PARTNER_IP": "3",
	}})
	limited := func(r harness.Response, code, what string) {
		t.Helper()
		if r.Status != http.StatusTooManyRequests || r.JSON(t)["error"] != code ||
			code == "rate_limited" && r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: %d %s %v, want 429 %s", what, r.Status, r.Body, r.Header.Get("Retry-After"), code)
		}
	}

	// Proposals: 10 per account, 20 per IP a day.
	proposal := func(u harness.User, i int) harness.Response {
		return p.Post(t, "/api/gov/proposals", u.Token, map[string]any{"title": "Budget " + strconv.Itoa(i),
			"category": "budget", "voteMode": "yes-no-abstain"})
	}
	authors := []harness.User{p.Register(t, "budget-a1"), p.Register(t, "budget-a2"), p.Register(t, "budget-a3")}
	n := 0
	for _, u := range authors[:2] {
		for range schemas.BudgetGovProposal.PerAccount {
			if r := proposal(u, n); r.Status != http.StatusCreated {
				t.Fatalf("proposal %d: %d %s", n, r.Status, r.Body)
			}
			n++
		}
	}
	if int64(n) != schemas.BudgetGovProposal.PerIP {
		t.Fatalf("test assumes two accounts fill the IP budget: %d", n)
	}
	r := proposal(authors[2], n)
	limited(r, "rate_limited", "a third account's first proposal past the IP budget")
	if m := r.JSON(t); m["budget"] != schemas.BudgetGovProposal.Name || m["scope"] != "ip" {
		t.Fatalf("refusal names %v %v", m["budget"], m["scope"])
	}

	// AI: 100 a month per account, 200 a day per IP: three accounts.
	sliders := sliderBody([8]int{50, 50, 50, 50, 50, 50, 50, 50})
	calls := 0
	for _, u := range authors {
		for range 70 {
			r := p.Post(t, "/api/constitution/ai-suggest", u.Token, map[string]any{"sliders": sliders})
			if int64(calls) < schemas.BudgetAI.PerIP {
				if r.Status != http.StatusOK {
					t.Fatalf("AI call %d: %d %s", calls, r.Status, r.Body)
				}
			} else {
				limited(r, "rate_limited", "AI call past the IP budget")
			}
			calls++
		}
	}
	// The refused calls did not count against the account's monthly cap.
	var plan schemas.ConstitutionPlan
	p.Get(t, "/api/constitution/me/plan", authors[2].Token).Decode(t, &plan)
	if want := schemas.BudgetAI.PerIP - 140; plan.AIRequestsUsed != want {
		t.Fatalf("third account used %d AI requests, want %d", plan.AIRequestsUsed, want)
	}

	// Partner keys: 3 active per user; revoking one frees a slot.
	emp := authors[0]
	var first string
	for i := range schemas.PartnerKeysPerUser {
		id, _ := buildKey(t, p, emp)
		if i == 0 {
			first = id
		}
	}
	limited(p.Post(t, "/api/build/partner-keys", emp.Token, map[string]any{}), "key_limit_reached", "a fourth partner key")
	if r := p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/build/partner-keys/" + first, Token: emp.Token}); r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	_, keyA := buildKey(t, p, emp)
	_, keyB := buildKey(t, p, authors[1])
	// Partner API: each key is within its 100 a minute, the IP's 3 stop
	// the second key.
	for i := range 2 {
		if r := buildPartner(t, p, "/vacancies", keyA); r.Status != http.StatusOK {
			t.Fatalf("key A %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := buildPartner(t, p, "/vacancies", keyB); r.Status != http.StatusOK {
		t.Fatalf("key B: %d %s", r.Status, r.Body)
	}
	limited(buildPartner(t, p, "/vacancies", keyB), "rate_limited", "a second key past the IP's partner budget")
}

// TestBudgetsChargeOnlyAcceptedRequests: a refused request spends no
// budget. Duplicate ballots (409 already_voted) and an idempotent replay of
// a proposal leave the account's and the address's counters where the
// accepted requests put them.
func TestBudgetsChargeOnlyAcceptedRequests(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{"ABUSE_BUDGETS": "1"}})
	pg, err := pgxpool.New(context.Background(), p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	used := func(budget, scope, subject string) int64 {
		t.Helper()
		var n int64
		if err := pg.QueryRow(context.Background(), `SELECT coalesce(sum(used), 0) FROM abuse_budgets
WHERE budget = $1 AND scope = $2 AND subject = $3`, budget, scope, subject).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	author := p.Register(t, "budget-refund")
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	body := map[string]any{"title": "Refunds", "category": "budget", "voteMode": "yes-no-abstain"}
	key := map[string]string{"Idempotency-Key": "refund-" + strconv.FormatInt(time.Now().UnixNano(), 10)}
	first := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/gov/proposals", Token: author.Token, Body: body, Headers: key})
	if first.Status != http.StatusCreated {
		t.Fatalf("proposal: %d %s", first.Status, first.Body)
	}
	var prop govProposal
	first.Decode(t, &prop)
	for range 3 {
		if r := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/gov/proposals", Token: author.Token, Body: body,
			Headers: key}); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", r.Status, r.Body)
		}
	}
	if n := used(schemas.BudgetGovProposal.Name, "account", author.ID); n != 1 {
		t.Fatalf("one proposal and three replays spent %d of the account's proposal budget, want 1", n)
	}
	govAct(t, p, admin.Token, prop.ID, "open", http.StatusOK)
	if r := govVote(t, p, author.Token, prop.ID, map[string]any{"choice": "yes"}); r.Status != http.StatusCreated {
		t.Fatalf("ballot: %d %s", r.Status, r.Body)
	}
	for range 3 {
		if r := govVote(t, p, author.Token, prop.ID, map[string]any{"choice": "no"}); r.Status != http.StatusConflict {
			t.Fatalf("duplicate ballot: %d %s", r.Status, r.Body)
		}
	}
	if n := used(schemas.BudgetGovBallot.Name, "account", author.ID); n != 1 {
		t.Fatalf("one ballot and three refused duplicates spent %d of the account's ballot budget, want 1", n)
	}
	if n := used(schemas.BudgetGovBallot.Name, "ip", "127.0.0.1"); n != 1 {
		t.Fatalf("the address's ballot budget: %d spent, want 1", n)
	}
	if n := used(schemas.BudgetGovBallot.Name, "global", ""); n != 1 {
		t.Fatalf("the global ballot count: %d, want 1", n)
	}
}
