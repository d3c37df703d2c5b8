package gov

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"time"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

// stamp renders a timestamp as RFC 3339 UTC with whole seconds.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func stampPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

func view(p store.Proposal) schemas.Proposal {
	opts := p.Options
	if opts == nil {
		opts = []string{}
	}
	return schemas.Proposal{
		ID: p.ID, Title: p.Title, Summary: p.Summary, Body: p.Body, Category: p.Category, VoteMode: p.VoteMode,
		Options: opts, Quorum: p.Quorum, Threshold: json.Number(p.Threshold), VotingDurationSeconds: p.VotingDurationSeconds,
		Status: p.Status, AuthorUserID: p.AuthorUserID, VotesOpenAt: stampPtr(p.VotesOpenAt),
		VotesCloseAt: stampPtr(p.VotesCloseAt), ClosedAt: stampPtr(p.ClosedAt), CreatedAt: stamp(p.CreatedAt),
	}
}

// rules returns the frozen tally parameters of a proposal.
func rules(p store.Proposal) (Rules, error) {
	t, ok := new(big.Rat).SetString(p.Threshold)
	if !ok {
		return Rules{}, fmt.Errorf("proposal %s: stored threshold %q is not a number", p.ID, p.Threshold)
	}
	return Rules{Mode: p.VoteMode, Options: p.Options, Quorum: p.Quorum, Threshold: t}, nil
}

// tallyOf counts stored ballots under the proposal's rules.
func tallyOf(p store.Proposal, ballots []store.Ballot) (Rules, Result, error) {
	r, err := rules(p)
	if err != nil {
		return Rules{}, Result{}, err
	}
	bs := make([]Ballot, len(ballots))
	for i, b := range ballots {
		bs[i] = Ballot{Choice: b.Choice, Ranking: b.Ranking}
		if b.Weights != nil {
			bs[i].Weights = make(map[string]*big.Rat, len(b.Weights))
			for o, w := range b.Weights {
				x, ok := new(big.Rat).SetString(w)
				if !ok {
					return Rules{}, Result{}, fmt.Errorf("ballot %s: stored weight %q is not a number", b.ID, w)
				}
				bs[i].Weights[o] = x
			}
		}
	}
	return r, Tally(r, bs), nil
}

// numberLiteral is a JSON number without sign, bounded in length so that
// exact parsing never allocates more than a few words.
var numberLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,19})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?$`)

// parseDecimal reads a JSON number literal exactly. ok is false for
// anything that is not a plain JSON number of bounded size.
func parseDecimal(raw string) (*big.Rat, bool) {
	if !numberLiteral.MatchString(raw) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(raw)
	return r, ok
}

// eventOf is the data of a proposal.* event.
func eventOf(p store.Proposal) schemas.ProposalEvent {
	ev := schemas.ProposalEvent{ProposalID: p.ID, AuthorUserID: p.AuthorUserID, Title: p.Title, Category: p.Category,
		VoteMode: p.VoteMode, Status: p.Status, Quorum: p.Quorum, Threshold: json.Number(p.Threshold)}
	if p.VotesOpenAt != nil {
		ev.VotesOpenAt = stamp(*p.VotesOpenAt)
	}
	if p.VotesCloseAt != nil {
		ev.VotesCloseAt = stamp(*p.VotesCloseAt)
	}
	return ev
}

func ratInt(n int64) *big.Rat { return big.NewRat(n, 1) }
