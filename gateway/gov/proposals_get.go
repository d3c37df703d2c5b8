package gov

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

// withTally returns the proposal's view with its tally: the frozen one of a
// closed proposal, else a count of the ballots now.
func (h *Handlers) withTally(c *fiber.Ctx, p store.Proposal) (schemas.Proposal, error) {
	out := view(p)
	if p.Tally != nil {
		t, err := frozenTally(p.Tally)
		if err != nil {
			return schemas.Proposal{}, err
		}
		out.Tally = &t
		return out, nil
	}
	ballots, err := h.reader.Ballots(c.UserContext(), p.ID)
	if err != nil {
		return schemas.Proposal{}, err
	}
	r, res, err := tallyOf(p, ballots)
	if err != nil {
		return schemas.Proposal{}, err
	}
	tv := res.View(r)
	out.Tally = &tv
	return out, nil
}

// getProposal answers one proposal with its current tally and breakdown.
func (h *Handlers) getProposal(c *fiber.Ctx, req *proposalPath) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	out, err := h.withTally(c, p)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// frozenTally decodes the tally stored at close (jsonb reorders keys) so
// that it renders exactly as the close answered it: numbers kept as
// written, maps re-sorted by encoding/json.
func frozenTally(raw []byte) (View, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v View
	if err := dec.Decode(&v); err != nil {
		return View{}, fmt.Errorf("decode frozen tally: %w", err)
	}
	return v, nil
}
