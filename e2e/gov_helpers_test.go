package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// govProposal is the API shape of a proposal as the tests read it.
type govProposal struct {
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Category     string          `json:"category"`
	VoteMode     string          `json:"voteMode"`
	Options      []string        `json:"options"`
	Quorum       int64           `json:"quorum"`
	Threshold    json.Number     `json:"threshold"`
	Status       string          `json:"status"`
	AuthorUserID string          `json:"authorUserId"`
	VotesOpenAt  *string         `json:"votesOpenAt"`
	VotesCloseAt *string         `json:"votesCloseAt"`
	CreatedAt    string          `json:"createdAt"`
	Tally        json.RawMessage `json:"tally"`
	Idempotent   *bool           `json:"idempotent"`
}

// govTally is the tally of a proposal; TallyNow keeps the raw JSON numbers.
type govTally struct {
	Ballots   int64                      `json:"ballots"`
	TallyNow  map[string]json.RawMessage `json:"tallyNow"`
	Leader    *string                    `json:"leader"`
	Share     *json.Number               `json:"share"`
	QuorumMet bool                       `json:"quorumMet"`
	Passing   bool                       `json:"passing"`
}

func (p govProposal) tally(t *testing.T) govTally {
	t.Helper()
	var tl govTally
	if err := json.Unmarshal(p.Tally, &tl); err != nil {
		t.Fatalf("tally of %s: %v: %s", p.ID, err, p.Tally)
	}
	return tl
}

// num returns a tallyNow value as its JSON text.
func (tl govTally) num(choice string) string { return string(tl.TallyNow[choice]) }

func govCreate(t *testing.T, p *harness.Platform, token string, body map[string]any) govProposal {
	t.Helper()
	r := p.Post(t, "/api/gov/proposals", token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create proposal: %d %s", r.Status, r.Body)
	}
	var out govProposal
	r.Decode(t, &out)
	return out
}

func govAct(t *testing.T, p *harness.Platform, token, id, action string, want int) govProposal {
	t.Helper()
	r := p.Post(t, "/api/gov/proposals/"+id+"/"+action, token, map[string]any{})
	if r.Status != want {
		t.Fatalf("%s %s: %d %s (want %d)", action, id, r.Status, r.Body, want)
	}
	var out govProposal
	if want == http.StatusOK {
		r.Decode(t, &out)
	}
	return out
}

func govGet(t *testing.T, p *harness.Platform, id string) govProposal {
	t.Helper()
	r := p.Get(t, "/api/gov/proposals/"+id, "")
	if r.Status != http.StatusOK {
		t.Fatalf("get proposal %s: %d %s", id, r.Status, r.Body)
	}
	var out govProposal
	r.Decode(t, &out)
	return out
}

// govVote casts a ballot and returns the answer.
func govVote(t *testing.T, p *harness.Platform, token, id string, ballot map[string]any) harness.Response {
	t.Helper()
	return p.Post(t, "/api/gov/proposals/"+id+"/votes", token, ballot)
}

func govWantError(t *testing.T, r harness.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if got, _ := r.JSON(t)["error"].(string); got != code {
		t.Fatalf("error %q, want %q: %s", got, code, r.Body)
	}
}

// repEvents returns the caller's applied reputation events of one kind by
// sourceId.
func govRepEvents(t *testing.T, p *harness.Platform, u harness.User, kind string) map[string]int64 {
	t.Helper()
	var me struct {
		Score  int64 `json:"score"`
		Events []struct {
			Kind     string  `json:"kind"`
			Weight   int64   `json:"weight"`
			SourceID *string `json:"sourceId"`
		} `json:"events"`
	}
	p.Get(t, "/api/reputation/me", u.Token).Decode(t, &me)
	out := map[string]int64{}
	for _, e := range me.Events {
		if e.Kind == kind && e.SourceID != nil {
			out[*e.SourceID] += e.Weight
		}
	}
	return out
}

// govDecision waits for the gov:decision ledger entry of a proposal.
func govDecision(t *testing.T, p *harness.Platform, proposalID string) map[string]any {
	t.Helper()
	var entry map[string]any
	harness.Eventually(t, 20*time.Second, "the gov:decision entry of "+proposalID, func() bool {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		p.Get(t, "/api/ledger/entries?kind=gov:decision&limit=200", "").Decode(t, &page)
		n := 0
		for _, e := range page.Items {
			if e["sourceId"] == proposalID {
				entry = e
				n++
			}
		}
		if n > 1 {
			t.Fatalf("%d gov:decision entries for %s", n, proposalID)
		}
		return n == 1
	})
	return entry
}
