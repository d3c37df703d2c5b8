package gov

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

// ballotView is a published ballot: the voter's user id is its only
// personal data (the free-text reason is not published).
type ballotView struct {
	VoteID    string                 `json:"voteId"`
	UserID    string                 `json:"userId"`
	Choice    *string                `json:"choice,omitempty"`
	Ranking   []string               `json:"ranking,omitempty"`
	Weights   map[string]json.Number `json:"weights,omitempty"`
	CreatedAt string                 `json:"createdAt"`
}

func ballotOf(b store.Ballot) ballotView {
	v := ballotView{VoteID: b.ID, UserID: b.UserID, Ranking: b.Ranking, CreatedAt: stamp(b.CreatedAt)}
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

// listVotes answers the ballots of a closed proposal in id order (ksuids:
// the order cast, to the second), paged;
// before close 409 proposal_not_closed.
func (h *Handlers) listVotes(c *fiber.Ctx) error {
	p, err := h.proposal(c)
	if err != nil {
		return err
	}
	if p.Status != schemas.ProposalExecuted && p.Status != schemas.ProposalRejected {
		return errNotClosed()
	}
	pg, err := bind.IDPageQuery(c)
	if err != nil {
		return err
	}
	rows, err := h.d.Reader.ListBallots(c.UserContext(), p.ID, pg.After, pg.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(page(rows, pg.Limit, func(b store.Ballot) string { return b.ID }, ballotOf))
}
