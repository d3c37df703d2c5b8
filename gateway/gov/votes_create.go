package gov

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// maxWeight bounds one weight of a weighted ballot.
const maxWeight = 1_000_000_000_000_000 // 10^15

// voteRequest is a ballot of any mode (decisions.md): yes-no-abstain
// { choice, reason? }; ranked-choice { ranking }; weighted { weights }.
// reason is accepted in every mode. Fields of another mode are refused.
type voteRequest struct {
	ID      string                     `path:"id" json:"-" format:"ksuid"`
	Choice  *string                    `json:"choice" enum:"yes,no,abstain" description:"yes-no-abstain ballots (required there)"`
	Reason  string                     `json:"reason" maxLength:"500" description:"accepted in every mode; never published"`
	Ranking []string                   `json:"ranking" description:"ranked-choice ballots: every option of the proposal exactly once, most preferred first"`
	Weights map[string]json.RawMessage `json:"weights" description:"weighted ballots: a positive number of at most 10^15 per option given one, for at least one option"`
}

// validate checks the ballot against the proposal's mode and options and
// returns it as stored (without ids and time).
func (req voteRequest) validate(p store.Proposal) (store.Ballot, error) {
	var v bind.Validator
	b := store.Ballot{Reason: strings.TrimSpace(req.Reason)}
	text(&v, "reason", b.Reason, bind.MaxMemo)
	known := make(map[string]bool, len(p.Options))
	for _, o := range p.Options {
		known[o] = true
	}
	notHere := "is not used by " + p.VoteMode + " ballots"
	switch p.VoteMode {
	case schemas.VoteModeYesNoAbstain:
		if req.Choice == nil {
			v.Fail("choice", "is required")
		} else {
			b.Choice = strings.TrimSpace(*req.Choice)
			v.OneOf("choice", b.Choice, schemas.ChoiceYes, schemas.ChoiceNo, schemas.ChoiceAbstain)
		}
		v.Check(req.Ranking == nil, "ranking", notHere)
		v.Check(req.Weights == nil, "weights", notHere)
	case schemas.VoteModeRanked:
		v.Check(req.Choice == nil, "choice", notHere)
		v.Check(req.Weights == nil, "weights", notHere)
		seen := make(map[string]bool, len(req.Ranking))
		for _, o := range req.Ranking {
			switch {
			case !known[o]:
				v.Fail("ranking", "names an option the proposal does not have")
			case seen[o]:
				v.Fail("ranking", "names an option more than once")
			}
			seen[o] = true
		}
		v.Check(len(req.Ranking) == len(p.Options), "ranking", "must rank every option exactly once")
		b.Ranking = req.Ranking
	case schemas.VoteModeWeighted:
		v.Check(req.Choice == nil, "choice", notHere)
		v.Check(req.Ranking == nil, "ranking", notHere)
		if len(req.Weights) == 0 {
			v.Fail("weights", "must give a positive weight to at least one option")
		}
		b.Weights = make(map[string]string, len(req.Weights))
		for o, raw := range req.Weights {
			if !known[o] {
				v.Fail("weights", "names an option the proposal does not have")
				continue
			}
			lit := strings.TrimSpace(string(raw))
			w, ok := parseDecimal(lit)
			if !isJSONNumber(raw) || !ok || w.Sign() <= 0 || w.Cmp(ratInt(maxWeight)) > 0 {
				v.Fail("weights."+o, "must be a positive number of at most 10^15")
				continue
			}
			b.Weights[o] = lit
		}
	}
	return b, v.Err()
}

// vote casts the caller's ballot: 201 with the tally after it. One ballot
// per (proposal, user): a second one is 409 already_voted, also when both
// arrive at once. The first ballot on a proposal earns gov-voter +1, keyed
// by the proposal id so it is applied once per voter and proposal.
func (h *Handlers) vote(c *fiber.Ctx, req *voteRequest) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	b, err := req.validate(p)
	if err != nil {
		return err
	}
	user := caller(c)
	ticket, err := h.budgets.Take(c, schemas.BudgetGovBallot, user)
	if err != nil {
		return err
	}
	// Only an accepted ballot spends the budget: a refused one (409
	// already_voted, voting_closed) gives its unit back.
	accepted := false
	defer func() {
		if !accepted {
			ticket.Refund(c.UserContext())
		}
	}()
	now := h.now().UTC()
	b.ID, b.ProposalID, b.UserID, b.CreatedAt = schemas.NewID(), p.ID, user, now
	env, err := schemas.New(schemas.TypeReputationEvent, user, user, schemas.ReputationEvent{
		UserID: user, Kind: schemas.RepKindGovVoter, SourceModule: "gov", Weight: weightVoter, SourceID: p.ID,
		Meta: map[string]any{"proposalId": p.ID},
	}, now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.ReputationCommands, env)
	if err != nil {
		return err
	}
	ballots, err := h.writer.Vote(c.UserContext(), b, []pipeline.OutboxRow{row})
	if err != nil {
		return storeErr(err)
	}
	accepted = true
	r, res, err := tallyOf(p, ballots)
	if err != nil {
		return err
	}
	tv := res.View(r)
	return c.Status(http.StatusCreated).JSON(schemas.GovVoteResult{VoteID: b.ID, ProposalID: p.ID, TallyNow: tv.TallyNow,
		Ballots: tv.Ballots, QuorumMet: tv.QuorumMet, Passing: tv.Passing})
}
