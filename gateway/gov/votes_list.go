package gov

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

func ballotOf(b store.Ballot) schemas.GovBallot {
	v := schemas.GovBallot{VoteID: b.ID, UserID: b.UserID, Ranking: b.Ranking, CreatedAt: stamp(b.CreatedAt)}
	if b.Choice != "" {
		ch := b.Choice
		v.Choice = &ch
	}
	if b.Weights != nil {
		v.Weights = make(map[string]json.Number, len(b.Weights))
		for o, w := range b.Weights {
			v.Weights[o] = json.Number(w)
		}
	}
	return v
}

// listVotesRequest is a page of the ballots of one proposal.
type listVotesRequest struct {
	ID string `path:"id" json:"-" format:"ksuid"`
	bind.IDPaging
}

// Validate reads nothing at bind time: the page is read by listVotes once
// the proposal is found and closed, so an unknown proposal stays 404 and an
// open one 409 whatever the cursor.
func (req *listVotesRequest) Validate() error { return nil }

// listVotes answers the ballots of a closed proposal in id order (ksuids:
// the order cast, to the second), paged;
// before close 409 proposal_not_closed.
func (h *Handlers) listVotes(c *fiber.Ctx, req *listVotesRequest) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	if p.Status != schemas.ProposalExecuted && p.Status != schemas.ProposalRejected {
		return errNotClosed()
	}
	if err := req.IDPaging.Validate(); err != nil {
		return err
	}
	pg := req.Page()
	rows, err := h.reader.ListBallots(c.UserContext(), p.ID, pg.After, pg.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, pg.Limit, func(b store.Ballot) string { return b.ID }, ballotOf))
}
