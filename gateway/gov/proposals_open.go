package gov

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// open moves a draft to open: votesOpenAt = now, votesCloseAt = now +
// votingDurationSeconds; 409 invalid_state from any other status.
func (h *Handlers) open(c *fiber.Ctx, req *proposalPath) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	if p.Status != schemas.ProposalDraft {
		return errInvalidState("only a draft can be opened")
	}
	now := h.now().UTC().Truncate(time.Second)
	closeAt := now.Add(time.Duration(p.VotingDurationSeconds) * time.Second)
	p.Status, p.VotesOpenAt, p.VotesCloseAt = schemas.ProposalOpen, &now, &closeAt
	env, err := schemas.New(schemas.TypeProposalOpened, p.ID, caller(c), eventOf(p), now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsGov, env)
	if err != nil {
		return err
	}
	opened, err := h.writer.Open(c.UserContext(), p.ID, now, closeAt, []pipeline.OutboxRow{row})
	if err != nil {
		return storeErr(err)
	}
	out, err := h.withTally(c, opened)
	if err != nil {
		return err
	}
	return c.JSON(out)
}
