package gov

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

// listProposals answers proposals in every status (drafts included), newest
// first, filtered by status, category and authorUserId.
func (h *Handlers) listProposals(c *fiber.Ctx) error {
	p, err := bind.IDPageQuery(c)
	if err != nil {
		return err
	}
	f := store.Filter{Status: c.Query("status"), Category: c.Query("category"), AuthorUserID: c.Query("authorUserId")}
	var v bind.Validator
	if f.Status != "" {
		v.OneOf("status", f.Status, schemas.ProposalStatuses...)
	}
	text(&v, "category", f.Category, MaxCategory)
	text(&v, "authorUserId", f.AuthorUserID, bind.MaxTitle)
	if err := v.Err(); err != nil {
		return err
	}
	rows, err := h.d.Reader.List(c.UserContext(), f, p.After, p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(page(rows, p.Limit, func(r store.Proposal) string { return r.ID }, view))
}
