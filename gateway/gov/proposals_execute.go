package gov

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
)

// execute fires the side effects of a passed proposal. A passing close
// executes at once, so on an executed proposal this answers 200 with
// idempotent: true; any other status is 409 invalid_state.
func (h *Handlers) execute(c *fiber.Ctx, req *proposalPath) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	if p.Status != schemas.ProposalExecuted {
		return errInvalidState("only a passed (executed) proposal can be executed")
	}
	out, err := h.withTally(c, p)
	if err != nil {
		return err
	}
	yes := true
	out.Idempotent = &yes
	return c.JSON(out)
}
