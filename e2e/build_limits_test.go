package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestBuildPlanLimitAndPartnerRate runs its own platform with a plan of 3
// open vacancies and a partner budget of 4 requests a minute: concurrent
// creates get exactly 3 slots, closing one frees one, and each partner key
// (and the IP without a key) has its own budget with RateLimit headers and a
// 429 rate_limited with Retry-After beyond it.
func TestBuildPlanLimitAndPartnerRate(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"BUILD_PLAN_VACANCY_LIMIT": "3",
		"RATE_LIMIT_PARTNER":       "4",
	}})
	emp := p.Register(t, "build-plan")
	proj := buildProject(t, p, emp, "plan")

	const tries = 10
	statuses := make([]int, tries)
	codes := make([]string, tries)
	var wg sync.WaitGroup
	for i := 0; i < tries; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := p.Post(t, "/api/build/vacancies", emp.Token, buildVacancyBody(proj, map[string]any{"title": "Role " + strconv.Itoa(i)}))
			statuses[i] = r.Status
			if r.Status != http.StatusCreated {
				codes[i], _ = r.JSON(t)["error"].(string)
			}
		}(i)
	}
	wg.Wait()
	created := 0
	var firstID string
	for i, s := range statuses {
		switch {
		case s == http.StatusCreated:
			created++
		case s == http.StatusForbidden && codes[i] == "plan_vacancy_limit_reached":
		default:
			t.Fatalf("create %d: %d %s", i, s, codes[i])
		}
	}
	if created != 3 {
		t.Fatalf("%d of %d concurrent creates succeeded, want exactly 3", created, tries)
	}
	own := p.Get(t, "/api/build/vacancies", emp.Token)
	var ownList struct {
		Items []struct{ ID string } `json:"items"`
		Total int                   `json:"total"`
	}
	own.Decode(t, &ownList)
	if ownList.Total != 3 {
		t.Fatalf("employer holds %d vacancies", ownList.Total)
	}
	firstID = ownList.Items[0].ID
	if r := p.Post(t, "/api/build/vacancies/"+firstID+"/close", emp.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("close: %d", r.Status)
	}
	buildVacancy(t, p, emp, proj, nil) // the freed slot
	if r := p.Post(t, "/api/build/vacancies", emp.Token, buildVacancyBody(proj, nil)); r.Status != http.StatusForbidden {
		t.Fatalf("over the plan again: %d %s", r.Status, r.Body)
	}
	// Another employer has its own plan.
	other := p.Register(t, "build-plan-2")
	buildVacancy(t, p, other, buildProject(t, p, other, "plan2"), nil)

	// Rate budget: start early in a window so that it does not roll over.
	if s := time.Now().Second(); s > 45 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	_, keyA := buildKey(t, p, emp)
	_, keyB := buildKey(t, p, other)
	for i := 1; i <= 4; i++ {
		r := buildPartner(t, p, "/vacancies", keyA)
		if r.Status != http.StatusOK || r.Header.Get("RateLimit-Limit") != "4" || r.Header.Get("RateLimit-Remaining") != strconv.Itoa(4-i) ||
			r.Header.Get("RateLimit-Reset") == "" || r.Header.Get("RateLimit-Policy") == "" {
			t.Fatalf("key A request %d: %d %v", i, r.Status, r.Header)
		}
	}
	over := buildPartner(t, p, "/vacancies", keyA)
	if over.Status != http.StatusTooManyRequests || over.JSON(t)["error"] != "rate_limited" || over.Header.Get("Retry-After") == "" ||
		over.Header.Get("Access-Control-Allow-Origin") != "" && over.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("key A over budget: %d %s %v", over.Status, over.Body, over.Header)
	}
	if r := buildPartner(t, p, "/health", keyB); r.Status != http.StatusOK || r.Header.Get("RateLimit-Remaining") != "3" {
		t.Fatalf("key B has its own budget: %d %v", r.Status, r.Header)
	}
	for i := 1; i <= 4; i++ {
		if r := buildPartner(t, p, "/vacancies", ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("no key request %d: %d", i, r.Status)
		}
	}
	if r := buildPartner(t, p, "/vacancies", ""); r.Status != http.StatusTooManyRequests {
		t.Fatalf("no key over the IP budget: %d", r.Status)
	}
	// Guessing: every unknown key would have a budget of its own, so unknown
	// keys are also charged to the IP; the fifth guess in a minute is refused.
	guess := func(i int) harness.Response {
		return buildPartner(t, p, "/vacancies", "qb_pk_"+strings.Repeat("G", 22)+strconv.Itoa(i))
	}
	for i := 1; i <= 4; i++ {
		if r := guess(i); r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := guess(5); r.Status != http.StatusTooManyRequests {
		t.Fatalf("fifth guessed key: %d %s", r.Status, r.Body)
	}
	if r := buildPartner(t, p, "/health", keyB); r.Status != http.StatusOK {
		t.Fatalf("a valid key is unaffected by the guesses: %d", r.Status)
	}
}
