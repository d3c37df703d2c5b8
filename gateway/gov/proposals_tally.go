package gov

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// tally recounts the ballots of a proposal in any status.
func (h *Handlers) tally(c *fiber.Ctx, req *proposalPath) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	ballots, err := h.reader.Ballots(c.UserContext(), p.ID)
	if err != nil {
		return err
	}
	r, res, err := tallyOf(p, ballots)
	if err != nil {
		return err
	}
	return c.JSON(schemas.ProposalTally{ProposalID: p.ID, Status: p.Status, VoteMode: p.VoteMode, GovTally: res.View(r)})
}
