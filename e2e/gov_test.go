package e2e

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"regexp"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
)

var govRFC3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)

// A yes-no-abstain proposal from draft to executed: admin-only transitions,
// one ballot per user, ballots published only after close, the decision in
// the ledger and the reputation events.
func TestGovYesNoAbstainLifecycle(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	author := p.Register(t, "gov-author")
	outsider := p.Register(t, "gov-outsider")
	voters := []harness.User{p.Register(t, "gov-v1"), p.Register(t, "gov-v2"), p.Register(t, "gov-v3"), p.Register(t, "gov-v4")}

	pr := govCreate(t, p, author.Token, map[string]any{"title": "Fund the bridge", "summary": "s", "body": "b",
		"category": "infra-yna", "voteMode": "yes-no-abstain", "quorum": 3, "threshold": 0.5})
	if pr.Status != "draft" || pr.AuthorUserID != author.ID || pr.VotesOpenAt != nil || pr.Quorum != 3 ||
		pr.Threshold != "0.5" || len(pr.Options) != 0 || !govRFC3339.MatchString(pr.CreatedAt) {
		t.Fatalf("draft: %+v", pr)
	}
	// Drafts are public and listed.
	if g := govGet(t, p, pr.ID); g.Status != "draft" || g.tally(t).Ballots != 0 {
		t.Fatalf("draft read: %+v", g)
	}
	var list struct {
		Items      []govProposal `json:"items"`
		NextCursor *string       `json:"nextCursor"`
	}
	p.Get(t, "/api/gov/proposals?status=draft&authorUserId="+author.ID, "").Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != pr.ID || list.NextCursor != nil {
		t.Fatalf("draft list: %+v", list)
	}

	govWantError(t, govVote(t, p, voters[0].Token, pr.ID, map[string]any{"choice": "yes"}), http.StatusConflict, "voting_closed")
	govWantError(t, p.Get(t, "/api/gov/proposals/"+pr.ID+"/votes", ""), http.StatusConflict, "proposal_not_closed")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/open", outsider.Token, map[string]any{}), http.StatusForbidden, "forbidden")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/open", author.Token, map[string]any{}), http.StatusForbidden, "forbidden")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/open", "", map[string]any{}), http.StatusUnauthorized, "auth_required")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/close", admin.Token, map[string]any{}), http.StatusConflict, "invalid_state")

	opened := govAct(t, p, admin.Token, pr.ID, "open", http.StatusOK)
	if opened.Status != "open" || opened.VotesOpenAt == nil || opened.VotesCloseAt == nil ||
		!govRFC3339.MatchString(*opened.VotesOpenAt) || !govRFC3339.MatchString(*opened.VotesCloseAt) {
		t.Fatalf("opened: %+v", opened)
	}
	o, _ := time.Parse(time.RFC3339, *opened.VotesOpenAt)
	c, _ := time.Parse(time.RFC3339, *opened.VotesCloseAt)
	if c.Sub(o) != 604800*time.Second {
		t.Fatalf("default window %s", c.Sub(o))
	}
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/open", admin.Token, map[string]any{}), http.StatusConflict, "invalid_state")

	// Ballots that do not match the mode are 422 and record nothing.
	for _, bad := range []map[string]any{{}, {"choice": "maybe"}, {"choice": 1}, {"ranking": []string{"yes"}},
		{"choice": "yes", "weights": map[string]any{"yes": 1}}} {
		r := govVote(t, p, voters[0].Token, pr.ID, bad)
		govWantError(t, r, http.StatusUnprocessableEntity, "validation_failed")
	}

	type voteResult struct {
		VoteID    string                     `json:"voteId"`
		TallyNow  map[string]json.RawMessage `json:"tallyNow"`
		QuorumMet bool                       `json:"quorumMet"`
		Passing   bool                       `json:"passing"`
	}
	steps := []struct {
		choice           string
		yes, no, abstain string
		quorum, passing  bool
	}{
		{"yes", "1", "0", "0", false, false},
		{"no", "1", "1", "0", false, false},
		{"abstain", "1", "1", "1", true, false}, // exactly at the threshold is not passing
		{"yes", "2", "1", "1", true, true},
	}
	for i, s := range steps {
		r := govVote(t, p, voters[i].Token, pr.ID, map[string]any{"choice": s.choice, "reason": "my reason"})
		if r.Status != http.StatusCreated {
			t.Fatalf("vote %d: %d %s", i, r.Status, r.Body)
		}
		var v voteResult
		r.Decode(t, &v)
		if v.VoteID == "" || string(v.TallyNow["yes"]) != s.yes || string(v.TallyNow["no"]) != s.no ||
			string(v.TallyNow["abstain"]) != s.abstain || v.QuorumMet != s.quorum || v.Passing != s.passing {
			t.Fatalf("vote %d: %s", i, r.Body)
		}
	}
	govWantError(t, govVote(t, p, voters[0].Token, pr.ID, map[string]any{"choice": "no"}), http.StatusConflict, "already_voted")
	govWantError(t, p.Get(t, "/api/gov/proposals/"+pr.ID+"/votes", ""), http.StatusConflict, "proposal_not_closed")

	r := p.Post(t, "/api/gov/proposals/"+pr.ID+"/tally", outsider.Token, map[string]any{})
	if r.Status != http.StatusOK {
		t.Fatalf("tally: %d %s", r.Status, r.Body)
	}
	var tl govTally
	r.Decode(t, &tl)
	if tl.Ballots != 4 || tl.num("yes") != "2" || !tl.Passing || !tl.QuorumMet || string(*tl.Share) != "0.666667" {
		t.Fatalf("tally: %s", r.Body)
	}

	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/close", outsider.Token, map[string]any{}), http.StatusForbidden, "forbidden")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/execute", admin.Token, map[string]any{}), http.StatusConflict, "invalid_state")
	closed := govAct(t, p, admin.Token, pr.ID, "close", http.StatusOK)
	if closed.Status != "executed" {
		t.Fatalf("closed: %+v", closed)
	}
	if ct := closed.tally(t); ct.Ballots != 4 || ct.num("yes") != "2" || ct.num("no") != "1" || ct.num("abstain") != "1" || !ct.Passing {
		t.Fatalf("closing tally: %s", closed.Tally)
	}
	govWantError(t, govVote(t, p, outsider.Token, pr.ID, map[string]any{"choice": "yes"}), http.StatusConflict, "voting_closed")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/close", admin.Token, map[string]any{}), http.StatusConflict, "invalid_state")
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr.ID+"/execute", outsider.Token, map[string]any{}), http.StatusForbidden, "forbidden")
	for range 2 {
		ex := govAct(t, p, admin.Token, pr.ID, "execute", http.StatusOK)
		if ex.Status != "executed" || ex.Idempotent == nil || !*ex.Idempotent {
			t.Fatalf("execute: %+v", ex)
		}
	}

	// Ballots are published after close, with the voter's id as the only
	// personal data, paged.
	var votes struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"nextCursor"`
	}
	p.Get(t, "/api/gov/proposals/"+pr.ID+"/votes?limit=3", "").Decode(t, &votes)
	if len(votes.Items) != 3 || votes.NextCursor == nil {
		t.Fatalf("votes page 1: %+v", votes)
	}
	seen := map[string]bool{}
	for _, v := range votes.Items {
		seen[v["userId"].(string)] = true
		for k := range v {
			if k != "voteId" && k != "userId" && k != "choice" && k != "createdAt" {
				t.Fatalf("ballot exposes %q: %v", k, v)
			}
		}
	}
	p.Get(t, "/api/gov/proposals/"+pr.ID+"/votes?limit=3&cursor="+*votes.NextCursor, "").Decode(t, &votes)
	if len(votes.Items) != 1 || votes.NextCursor != nil {
		t.Fatalf("votes page 2: %+v", votes)
	}
	seen[votes.Items[0]["userId"].(string)] = true
	for _, v := range voters {
		if !seen[v.ID] {
			t.Fatalf("ballot of %s missing", v.ID)
		}
	}

	// One gov:decision ledger entry with the full tally.
	entry := govDecision(t, p, pr.ID)
	meta, _ := entry["meta"].(map[string]any)
	mt, _ := meta["tally"].(map[string]any)
	now, _ := mt["tallyNow"].(map[string]any)
	if meta["status"] != "executed" || mt["ballots"] != float64(4) || now["yes"] != float64(2) || mt["passing"] != true {
		t.Fatalf("gov:decision entry: %v", entry)
	}

	// Reputation: +5 gov-author to the author, +1 gov-voter to each voter.
	harness.Eventually(t, 20*time.Second, "gov-author +5", func() bool {
		return govRepEvents(t, p, author, "gov-author")[pr.ID] == 5
	})
	for _, v := range voters {
		harness.Eventually(t, 20*time.Second, "gov-voter +1", func() bool {
			return govRepEvents(t, p, v, "gov-voter")[pr.ID] == 1
		})
	}
}

// Ranked-choice: instant-runoff with an elimination tie, every round
// reported, and the ballots that are not complete rankings refused.
func TestGovRankedChoiceLifecycle(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	author := p.Register(t, "gov-rc-author")
	pr := govCreate(t, p, author.Token, map[string]any{"title": "Pick a logo", "category": "design-rc",
		"voteMode": "ranked-choice", "options": []string{"A", "B", "C", "D"}, "quorum": 2, "votingDurationSeconds": 3600})
	if len(pr.Options) != 4 {
		t.Fatalf("options: %+v", pr)
	}
	govAct(t, p, admin.Token, pr.ID, "open", http.StatusOK)
	rankings := [][]string{{"A", "B", "C", "D"}, {"A", "B", "C", "D"}, {"B", "A", "C", "D"}, {"C", "B", "A", "D"},
		{"D", "A", "B", "C"}, {"D", "A", "B", "C"}}
	for i, rk := range rankings {
		u := p.Register(t, "gov-rc")
		if i == 0 {
			for _, bad := range [][]string{{"A", "B", "C"}, {"A", "A", "B", "C"}, {"A", "B", "C", "Z"}, {"A", "B", "C", "D", "D"}} {
				govWantError(t, govVote(t, p, u.Token, pr.ID, map[string]any{"ranking": bad}), http.StatusUnprocessableEntity, "validation_failed")
			}
			govWantError(t, govVote(t, p, u.Token, pr.ID, map[string]any{"choice": "yes"}), http.StatusUnprocessableEntity, "validation_failed")
		}
		if r := govVote(t, p, u.Token, pr.ID, map[string]any{"ranking": rk}); r.Status != http.StatusCreated {
			t.Fatalf("ballot %d: %d %s", i, r.Status, r.Body)
		}
	}
	closed := govAct(t, p, admin.Token, pr.ID, "close", http.StatusOK)
	tl := closed.tally(t)
	if closed.Status != "executed" || !tl.Passing || tl.Leader == nil || *tl.Leader != "A" ||
		tl.num("A") != "4" || tl.num("B") != "2" || tl.num("C") != "0" || tl.num("D") != "0" || string(*tl.Share) != "0.666667" {
		t.Fatalf("ranked close: %s", closed.Tally)
	}
	var rounds []struct {
		Counts     map[string]int64 `json:"counts"`
		Eliminated *string          `json:"eliminated"`
	}
	if err := json.Unmarshal(tl.TallyNow["rounds"], &rounds); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		counts     map[string]int64
		eliminated string
	}{
		{map[string]int64{"A": 2, "B": 1, "C": 1, "D": 2}, "C"}, // B and C tie: C is listed later
		{map[string]int64{"A": 2, "B": 2, "D": 2}, "D"},
		{map[string]int64{"A": 4, "B": 2}, ""},
	}
	if len(rounds) != len(want) {
		t.Fatalf("rounds: %s", tl.TallyNow["rounds"])
	}
	for i, w := range want {
		el := ""
		if rounds[i].Eliminated != nil {
			el = *rounds[i].Eliminated
		}
		if el != w.eliminated || len(rounds[i].Counts) != len(w.counts) {
			t.Fatalf("round %d: %+v", i+1, rounds[i])
		}
		for o, n := range w.counts {
			if rounds[i].Counts[o] != n {
				t.Fatalf("round %d: %+v", i+1, rounds[i])
			}
		}
	}
	var votes struct {
		Items []struct {
			UserID  string   `json:"userId"`
			Ranking []string `json:"ranking"`
		} `json:"items"`
	}
	p.Get(t, "/api/gov/proposals/"+pr.ID+"/votes", "").Decode(t, &votes)
	if len(votes.Items) != 6 || len(votes.Items[0].Ranking) != 4 {
		t.Fatalf("ranked ballots: %+v", votes)
	}
	if e := govDecision(t, p, pr.ID); e["meta"].(map[string]any)["voteMode"] != "ranked-choice" {
		t.Fatalf("entry: %v", e)
	}
	harness.Eventually(t, 20*time.Second, "gov-author +5", func() bool {
		return govRepEvents(t, p, author, "gov-author")[pr.ID] == 5
	})
}

// Weighted: each ballot is normalised to sum 1; the leader's share of the
// ballots below the threshold rejects, with quorum, so the author gets +1.
func TestGovWeightedLifecycle(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	author := p.Register(t, "gov-w-author")
	pr := govCreate(t, p, author.Token, map[string]any{"title": "Split the budget", "category": "budget-w",
		"voteMode": "weighted", "options": []string{"X", "Y", "Z"}, "quorum": 3, "threshold": 0.4})
	govAct(t, p, admin.Token, pr.ID, "open", http.StatusOK)
	ballots := []map[string]any{{"X": 3, "Y": 1}, {"X": 0.5, "Y": 0.5}, {"Z": 1}}
	for i, w := range ballots {
		u := p.Register(t, "gov-w")
		if i == 0 {
			for _, bad := range []map[string]any{{}, {"X": 0}, {"X": -1}, {"X": "1"}, {"Q": 1}} {
				govWantError(t, govVote(t, p, u.Token, pr.ID, map[string]any{"weights": bad}), http.StatusUnprocessableEntity, "validation_failed")
			}
		}
		r := govVote(t, p, u.Token, pr.ID, map[string]any{"weights": w})
		if r.Status != http.StatusCreated {
			t.Fatalf("ballot %d: %d %s", i, r.Status, r.Body)
		}
	}
	closed := govAct(t, p, admin.Token, pr.ID, "close", http.StatusOK)
	tl := closed.tally(t)
	// X = 3/4 + 1/2, Y = 1/4 + 1/2, Z = 1; leader X with 1.25 / 3 = 0.416667 > 0.4.
	if tl.num("X") != "1.25" || tl.num("Y") != "0.75" || tl.num("Z") != "1" || *tl.Leader != "X" ||
		string(*tl.Share) != "0.416667" || !tl.Passing || closed.Status != "executed" {
		t.Fatalf("weighted close: %s", closed.Tally)
	}

	// The same ballots against a threshold of 5/12 exactly: not passing.
	pr2 := govCreate(t, p, author.Token, map[string]any{"title": "Split again", "category": "budget-w",
		"voteMode": "weighted", "options": []string{"X", "Y", "Z"}, "quorum": 3, "threshold": 0.5})
	govAct(t, p, admin.Token, pr2.ID, "open", http.StatusOK)
	for _, w := range ballots {
		if r := govVote(t, p, p.Register(t, "gov-w2").Token, pr2.ID, map[string]any{"weights": w}); r.Status != http.StatusCreated {
			t.Fatalf("ballot: %d %s", r.Status, r.Body)
		}
	}
	rejected := govAct(t, p, admin.Token, pr2.ID, "close", http.StatusOK)
	if rt := rejected.tally(t); rejected.Status != "rejected" || rt.Passing || !rt.QuorumMet {
		t.Fatalf("rejected: %+v %s", rejected, rejected.Tally)
	}
	govWantError(t, p.Post(t, "/api/gov/proposals/"+pr2.ID+"/execute", admin.Token, map[string]any{}), http.StatusConflict, "invalid_state")
	harness.Eventually(t, 20*time.Second, "gov-author +5 and +1", func() bool {
		ev := govRepEvents(t, p, author, "gov-author")
		return ev[pr.ID] == 5 && ev[pr2.ID] == 1
	})
}

// Without quorum a proposal is rejected and its author gets nothing.
func TestGovRejectedWithoutQuorum(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	author := p.Register(t, "gov-nq-author")
	voter := p.Register(t, "gov-nq-voter")
	pr := govCreate(t, p, author.Token, map[string]any{"title": "Too few", "category": "misc-nq",
		"voteMode": "yes-no-abstain", "quorum": 3})
	govAct(t, p, admin.Token, pr.ID, "open", http.StatusOK)
	if r := govVote(t, p, voter.Token, pr.ID, map[string]any{"choice": "yes"}); r.Status != http.StatusCreated {
		t.Fatalf("vote: %d %s", r.Status, r.Body)
	}
	closed := govAct(t, p, admin.Token, pr.ID, "close", http.StatusOK)
	if tl := closed.tally(t); closed.Status != "rejected" || tl.QuorumMet || tl.Passing {
		t.Fatalf("no quorum: %s", closed.Tally)
	}
	if e := govDecision(t, p, pr.ID); e["meta"].(map[string]any)["status"] != "rejected" {
		t.Fatalf("entry: %v", e)
	}
	// The author's next reputation event (a ballot after the close) travels
	// the same partition after any gov-author of the close: once it is
	// applied, a gov-author would have been too.
	later := govCreate(t, p, voter.Token, map[string]any{"title": "Later", "category": "misc-nq", "voteMode": "yes-no-abstain"})
	govAct(t, p, admin.Token, later.ID, "open", http.StatusOK)
	if r := govVote(t, p, author.Token, later.ID, map[string]any{"choice": "no"}); r.Status != http.StatusCreated {
		t.Fatalf("vote: %d %s", r.Status, r.Body)
	}
	harness.Eventually(t, 20*time.Second, "the author's later gov-voter event", func() bool {
		return govRepEvents(t, p, author, "gov-voter")[later.ID] == 1
	})
	if ev := govRepEvents(t, p, author, "gov-author"); len(ev) != 0 {
		t.Fatalf("gov-author without quorum: %v", ev)
	}
	govAct(t, p, admin.Token, later.ID, "close", http.StatusOK)
}

// Concurrent ballots of one user: exactly one 201, the others 409.
func TestGovConcurrentBallotsOfOneUser(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	u := p.Register(t, "gov-cc")
	pr := govCreate(t, p, u.Token, map[string]any{"title": "Race", "category": "misc-cc", "voteMode": "yes-no-abstain"})
	govAct(t, p, admin.Token, pr.ID, "open", http.StatusOK)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := govVote(t, p, u.Token, pr.ID, map[string]any{"choice": []string{"yes", "no"}[i%2]})
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
			if r.Status == http.StatusConflict && r.JSON(t)["error"] != "already_voted" {
				t.Errorf("conflict: %s", r.Body)
			}
		}()
	}
	wg.Wait()
	if codes[http.StatusCreated] != 1 || codes[http.StatusConflict] != 19 {
		t.Fatalf("statuses: %v", codes)
	}
	if tl := govGet(t, p, pr.ID).tally(t); tl.Ballots != 1 {
		t.Fatalf("ballots: %d", tl.Ballots)
	}
	govAct(t, p, admin.Token, pr.ID, "close", http.StatusOK)
}

// Unknown and malformed ids are 404; bad bodies 422 or 400; never 500.
func TestGovNotFoundAndBadInput(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	u := p.Register(t, "gov-bad")
	govWantError(t, p.Get(t, "/api/gov/proposals/%00", ""), http.StatusUnprocessableEntity, "validation_failed")
	for _, id := range []string{"2ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "nope", "1%27%20OR%201=1"} {
		govWantError(t, p.Get(t, "/api/gov/proposals/"+id, ""), http.StatusNotFound, "not_found")
		govWantError(t, p.Get(t, "/api/gov/proposals/"+id+"/votes", ""), http.StatusNotFound, "not_found")
		govWantError(t, govVote(t, p, u.Token, id, map[string]any{"choice": "yes"}), http.StatusNotFound, "not_found")
		govWantError(t, p.Post(t, "/api/gov/proposals/"+id+"/tally", u.Token, map[string]any{}), http.StatusNotFound, "not_found")
		for _, action := range []string{"open", "close", "execute"} {
			govWantError(t, p.Post(t, "/api/gov/proposals/"+id+"/"+action, admin.Token, map[string]any{}), http.StatusNotFound, "not_found")
		}
	}
	govWantError(t, p.Get(t, "/api/gov/proposals?status=passed", ""), http.StatusUnprocessableEntity, "validation_failed")
	for _, cursor := range []string{"AA", "%21%21", "bm9wZQ"} { // NUL, not base64, "nope"
		govWantError(t, p.Get(t, "/api/gov/proposals?cursor="+cursor, ""), http.StatusBadRequest, "invalid_cursor")
	}
	for _, body := range []map[string]any{
		{}, {"title": "t", "category": "c", "voteMode": "plurality"},
		{"title": "t", "category": "c", "voteMode": "weighted", "options": []string{"A"}},
		{"title": "t", "category": "c", "voteMode": "weighted", "options": []string{"A", "A"}},
		{"title": "t", "category": "c", "voteMode": "yes-no-abstain", "threshold": 1},
		{"title": "t", "category": "c", "voteMode": "yes-no-abstain", "quorum": "3"},
		{"title": "t\u0000", "category": "c", "voteMode": "yes-no-abstain"},
		{"title": 5, "category": "c", "voteMode": "yes-no-abstain"},
	} {
		govWantError(t, p.Post(t, "/api/gov/proposals", u.Token, body), http.StatusUnprocessableEntity, "validation_failed")
	}
	govWantError(t, p.Post(t, "/api/gov/proposals", u.Token, "{not json"), http.StatusBadRequest, "invalid_json")
	govWantError(t, p.Post(t, "/api/gov/proposals", "", map[string]any{"title": "t"}), http.StatusUnauthorized, "auth_required")
	r := p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/gov/proposals", Token: u.Token})
	govWantError(t, r, http.StatusBadRequest, "content_type_required")
}

// /stats comes from ClickHouse and equals what Postgres holds once the sink
// caught up; /health counts open proposals; the OpenAPI slice is listed.
func TestGovStatsHealthAndOpenAPI(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	u := p.Register(t, "gov-st")
	mk := func(cat string) govProposal {
		return govCreate(t, p, u.Token, map[string]any{"title": "S", "category": cat, "voteMode": "yes-no-abstain"})
	}
	a, b, c := mk("stats-a"), mk("stats-a"), mk("stats-b")
	mk("stats-c")
	govAct(t, p, admin.Token, a.ID, "open", http.StatusOK)
	govAct(t, p, admin.Token, b.ID, "open", http.StatusOK)
	govAct(t, p, admin.Token, c.ID, "open", http.StatusOK)
	for i := range 3 {
		govVote(t, p, p.Register(t, "gov-st-v").Token, a.ID, map[string]any{"choice": []string{"yes", "no", "abstain"}[i]})
	}
	govVote(t, p, u.Token, b.ID, map[string]any{"choice": "no"})
	govAct(t, p, admin.Token, a.ID, "close", http.StatusOK)
	govAct(t, p, admin.Token, b.ID, "close", http.StatusOK)

	pool, err := pgxpool.New(context.Background(), p.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	type stats struct {
		ByStatus      map[string]int64 `json:"byStatus"`
		MeanTurnout   json.Number      `json:"meanTurnout"`
		TopCategories []struct {
			Category string `json:"category"`
			Count    int64  `json:"count"`
		} `json:"topCategories"`
	}
	fromPostgres := func() stats {
		ctx := context.Background()
		st := stats{ByStatus: map[string]int64{"draft": 0, "open": 0, "executed": 0, "rejected": 0}}
		rows, err := pool.Query(ctx, `SELECT status, count(*) FROM gov_proposals GROUP BY status`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			var n int64
			if err := rows.Scan(&s, &n); err != nil {
				t.Fatal(err)
			}
			st.ByStatus[s] = n
		}
		rows.Close()
		var closed, ballots int64
		if err := pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(ballots), 0) FROM gov_proposals WHERE status IN ('executed', 'rejected')`).
			Scan(&closed, &ballots); err != nil {
			t.Fatal(err)
		}
		st.MeanTurnout = "0"
		if closed > 0 {
			r := big.NewRat(ballots, closed)
			st.MeanTurnout = json.Number(r.FloatString(6))
		}
		rows, err = pool.Query(ctx, `SELECT category, count(*) FROM gov_proposals GROUP BY category ORDER BY count(*) DESC, category LIMIT 10`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c struct {
				Category string `json:"category"`
				Count    int64  `json:"count"`
			}
			if err := rows.Scan(&c.Category, &c.Count); err != nil {
				t.Fatal(err)
			}
			st.TopCategories = append(st.TopCategories, c)
		}
		rows.Close()
		return st
	}
	same := func(a, b stats) bool {
		ra, _ := new(big.Rat).SetString(string(a.MeanTurnout))
		rb, _ := new(big.Rat).SetString(string(b.MeanTurnout))
		if ra == nil || rb == nil || ra.FloatString(6) != rb.FloatString(6) || len(a.TopCategories) != len(b.TopCategories) {
			return false
		}
		for k, v := range b.ByStatus {
			if a.ByStatus[k] != v {
				return false
			}
		}
		for i := range a.TopCategories {
			if a.TopCategories[i] != b.TopCategories[i] {
				return false
			}
		}
		return len(a.ByStatus) == 4
	}
	var got, want stats
	harness.Eventually(t, 30*time.Second, "gov stats to match Postgres", func() bool {
		r := p.Get(t, "/api/gov/stats", "")
		if r.Status != http.StatusOK {
			return false
		}
		got = stats{}
		r.Decode(t, &got)
		want = fromPostgres()
		return same(got, want)
	})
	if got.ByStatus["open"] < 1 || got.ByStatus["executed"]+got.ByStatus["rejected"] < 2 {
		t.Fatalf("stats: %+v", got)
	}

	var h struct {
		Status        string `json:"status"`
		OpenProposals int64  `json:"openProposals"`
	}
	p.Get(t, "/api/gov/health", "").Decode(t, &h)
	var open int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM gov_proposals WHERE status = 'open'`).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if h.Status != "ok" || h.OpenProposals != open || open < 1 {
		t.Fatalf("health %+v, Postgres open %d", h, open)
	}

	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	p.Get(t, "/api/gov/openapi.json", "").Decode(t, &doc)
	wantOps := map[string][]string{
		"/api/gov/health": {"get"}, "/api/gov/stats": {"get"}, "/api/gov/proposals": {"get", "post"},
		"/api/gov/proposals/{id}": {"get"}, "/api/gov/proposals/{id}/votes": {"get", "post"},
		"/api/gov/proposals/{id}/open": {"post"}, "/api/gov/proposals/{id}/close": {"post"},
		"/api/gov/proposals/{id}/tally": {"post"}, "/api/gov/proposals/{id}/execute": {"post"},
	}
	for path, ops := range wantOps {
		for _, op := range ops {
			if doc.Paths[path][op] == nil {
				t.Errorf("openapi lacks %s %s", op, path)
			}
		}
	}
	var index struct {
		Modules []struct {
			Name    string `json:"name"`
			OpenAPI string `json:"openapi"`
		} `json:"modules"`
	}
	p.Get(t, "/api/platform/openapi.json", "").Decode(t, &index)
	names := []string{}
	for _, m := range index.Modules {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	if i := sort.SearchStrings(names, "gov"); i == len(names) || names[i] != "gov" {
		t.Fatalf("platform index modules: %v", names)
	}
	var full struct {
		Paths map[string]any `json:"paths"`
	}
	p.Get(t, "/api/openapi.json", "").Decode(t, &full)
	if full.Paths["/api/gov/proposals/{id}/votes"] == nil {
		t.Fatal("/api/openapi.json lacks the gov paths")
	}
}

// A proposal created with an Idempotency-Key is created once: a retry with
// the same body answers the original, a different body is 409.
func TestGovCreateIdempotencyKey(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "gov-idem")
	body := map[string]any{"title": "Once", "category": "misc-idem", "voteMode": "yes-no-abstain"}
	post := func(b any) harness.Response {
		return p.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/gov/proposals", Token: u.Token, Body: b,
			Headers: map[string]string{"Idempotency-Key": "gov-key-1"}})
	}
	first, second := post(body), post(body)
	if first.Status != http.StatusCreated || second.Status != http.StatusCreated || string(first.Body) != string(second.Body) ||
		second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s %v", first.Status, first.Body, second.Status, second.Body, second.Header)
	}
	govWantError(t, post(map[string]any{"title": "Other", "category": "misc-idem", "voteMode": "yes-no-abstain"}),
		http.StatusConflict, "idempotency_key_reused")
	var list struct {
		Items []govProposal `json:"items"`
	}
	p.Get(t, "/api/gov/proposals?authorUserId="+u.ID, "").Decode(t, &list)
	if len(list.Items) != 1 {
		t.Fatalf("%d proposals", len(list.Items))
	}
}

// A closed proposal reads back with the tally exactly as the close answered.
func TestGovFrozenTallyReadsBackVerbatim(t *testing.T) {
	p := shared(t)
	admin := p.RegisterEmail(t, harness.GovAdminEmail)
	u := p.Register(t, "gov-frozen")
	pr := govCreate(t, p, u.Token, map[string]any{"title": "Freeze", "category": "misc-frozen",
		"voteMode": "ranked-choice", "options": []string{"B", "A", "C"}})
	govAct(t, p, admin.Token, pr.ID, "open", http.StatusOK)
	for _, rk := range [][]string{{"A", "B", "C"}, {"B", "A", "C"}, {"C", "A", "B"}} {
		if r := govVote(t, p, p.Register(t, "gov-frozen-v").Token, pr.ID, map[string]any{"ranking": rk}); r.Status != http.StatusCreated {
			t.Fatalf("vote: %d %s", r.Status, r.Body)
		}
	}
	closed := govAct(t, p, admin.Token, pr.ID, "close", http.StatusOK)
	if got := govGet(t, p, pr.ID); string(got.Tally) != string(closed.Tally) {
		t.Fatalf("read back %s\nclose said %s", got.Tally, closed.Tally)
	}
	// A, B and C tie in round one: C, listed last, goes; its ballot makes A the majority.
	if tl := closed.tally(t); tl.Leader == nil || *tl.Leader != "A" || tl.num("A") != "2" {
		t.Fatalf("tally %s", closed.Tally)
	}
}
