package gov

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

// listProposalsRequest is a page of proposals, optionally filtered.
type listProposalsRequest struct {
	bind.TimePaging
	Status       string `query:"status" json:"-" enum:"draft,open,executed,rejected"`
	Category     string `query:"category" json:"-" maxLength:"64"`
	AuthorUserID string `query:"authorUserId" json:"-" maxLength:"200" description:"only the proposals of this author"`
}

// Validate reads the page; the filters are bound by their tags.
func (req *listProposalsRequest) Validate() error { return req.TimePaging.Validate() }

// listProposals answers proposals in every status (drafts included), newest
// first, filtered by status, category and authorUserId.
func (h *Handlers) listProposals(c *fiber.Ctx, req *listProposalsRequest) error {
	p := req.Page()
	f := store.Filter{Status: req.Status, Category: req.Category, AuthorUserID: req.AuthorUserID}
	rows, err := h.reader.List(c.UserContext(), f, req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, p.Limit, func(r store.Proposal) string {
		return schemas.Position{At: r.CreatedAt, ID: r.ID}.String()
	}, view))
}
