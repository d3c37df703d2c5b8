package gov

import (
	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

// listResponse is the shape of the module's lists: a page of items and the
// cursor of the next page (null once exhausted).
type listResponse[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// page trims a result fetched with limit+1 rows and computes the next cursor.
func page[R, T any](rows []R, limit int, id func(R) string, conv func(R) T) listResponse[T] {
	out := listResponse[T]{Items: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		next := bind.Cursor(id(rows[len(rows)-1]))
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, conv(r))
	}
	return out
}

// pageQuery reads cursor and limit; a cursor that does not decode to an id
// this module issued is refused like any foreign cursor.
func pageQuery(c *fiber.Ctx) (bind.Page, error) {
	p, err := bind.PageQuery(c)
	if err != nil {
		return p, err
	}
	if p.After != "" && !idPattern.MatchString(p.After) {
		return p, apierr.Validation(map[string]string{"cursor": "is not a cursor this API issued"})
	}
	return p, nil
}

// listProposals answers proposals in every status (drafts included), newest
// first, filtered by status, category and authorUserId.
func (h *Handlers) listProposals(c *fiber.Ctx) error {
	p, err := pageQuery(c)
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

// withTally returns the proposal's view with its tally: the frozen one of a
// closed proposal, else a count of the ballots now.
func (h *Handlers) withTally(c *fiber.Ctx, p store.Proposal) (proposalView, error) {
	out := view(p)
	if p.Tally != nil {
		out.Tally = p.Tally
		return out, nil
	}
	ballots, err := h.d.Reader.Ballots(c.UserContext(), p.ID)
	if err != nil {
		return proposalView{}, err
	}
	r, res, err := tallyOf(p, ballots)
	if err != nil {
		return proposalView{}, err
	}
	out.Tally = res.View(r)
	return out, nil
}

// getProposal answers one proposal with its current tally and breakdown.
func (h *Handlers) getProposal(c *fiber.Ctx) error {
	p, err := h.proposal(c)
	if err != nil {
		return err
	}
	out, err := h.withTally(c, p)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

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
