package gov

import "github.com/gofiber/fiber/v2"

// tallyResponse is the answer of POST /tally.
type tallyResponse struct {
	ProposalID string `json:"proposalId"`
	Status     string `json:"status"`
	VoteMode   string `json:"voteMode"`
	View
}

// tally recounts the ballots of a proposal in any status.
func (h *Handlers) tally(c *fiber.Ctx) error {
	p, err := h.proposal(c)
	if err != nil {
		return err
	}
	ballots, err := h.d.Reader.Ballots(c.UserContext(), p.ID)
	if err != nil {
		return err
	}
	r, res, err := tallyOf(p, ballots)
	if err != nil {
		return err
	}
	return c.JSON(tallyResponse{ProposalID: p.ID, Status: p.Status, VoteMode: p.VoteMode, View: res.View(r)})
}
