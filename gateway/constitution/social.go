package constitution

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
)

// vote records the caller's vote: 201 when new, 200 when the caller had
// voted already (nothing changes).
func (h *Handlers) vote(c *fiber.Ctx, req *artifactPath) error {
	id := req.ID
	created, err := h.catalog.Vote(c.UserContext(), id, caller(c), h.now().UTC())
	if err != nil {
		return notFoundAs(err)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return h.voteAnswer(c, id, status)
}

// unvote removes the caller's vote, if any, and answers 200.
func (h *Handlers) unvote(c *fiber.Ctx, req *artifactPath) error {
	id := req.ID
	if err := h.catalog.Unvote(c.UserContext(), id, caller(c)); err != nil {
		return notFoundAs(err)
	}
	return h.voteAnswer(c, id, http.StatusOK)
}

func (h *Handlers) voteAnswer(c *fiber.Ctx, id string, status int) error {
	votes, voted, _, err := h.catalog.Social(c.UserContext(), id, caller(c), schemas.Position{}, 0)
	if err != nil {
		return notFoundAs(err)
	}
	return c.Status(status).JSON(schemas.ConstitutionVote{ArtifactID: id, Votes: votes, Voted: voted})
}

// commentRequest is a comment on the artifact of the path.
type commentRequest struct {
	ID   string `path:"id" json:"-" format:"ksuid"`
	Text string `json:"text" required:"true" minLength:"1" maxLength:"2000" description:"trimmed; 1 to 2,000 characters"`

	text string
}

// Validate checks and trims the text.
func (r *commentRequest) Validate() error {
	var v bind.Validator
	r.text = cleanText(&v, "text", r.Text, maxCommentLen, true)
	return v.Err()
}

func viewComment(c store.Comment) schemas.ConstitutionComment {
	return schemas.ConstitutionComment{ID: c.ID, UserID: c.UserID, Text: c.Text, CreatedAt: timestamp(c.CreatedAt)}
}

// comment adds a comment of 1 to 2,000 characters and answers 201 with it.
func (h *Handlers) comment(c *fiber.Ctx, req *commentRequest) error {
	cm := store.Comment{ID: schemas.NewID(), ArtifactID: req.ID, UserID: caller(c), Text: req.text, CreatedAt: h.now().UTC()}
	if err := h.catalog.AddComment(c.UserContext(), cm); err != nil {
		return notFoundAs(err)
	}
	return c.Status(http.StatusCreated).JSON(viewComment(cm))
}

// socialRequest is an artifact and a page of its comments (the cursor is
// a creation time and id, schemas.Position).
type socialRequest struct {
	ID string `path:"id" json:"-" format:"ksuid"`
	bind.TimePaging
}

// commentsPage reads one page of an artifact's comments (limit+1 rows) with
// its votes; an unknown artifact is 404.
func (h *Handlers) commentsPage(c *fiber.Ctx, req *socialRequest) (int64, bool, schemas.Page[schemas.ConstitutionComment], error) {
	limit := req.Page().Limit
	votes, voted, comments, err := h.catalog.Social(c.UserContext(), req.ID, caller(c), req.Position(), limit+1)
	if err != nil {
		return 0, false, schemas.Page[schemas.ConstitutionComment]{}, notFoundAs(err)
	}
	position := func(cm store.Comment) string { return schemas.Position{At: cm.CreatedAt, ID: cm.ID}.String() }
	return votes, voted, bind.PageOf(comments, limit, position, viewComment), nil
}

// social answers { votes, voted, comments, nextCursor } (voted is false
// without a token; comments oldest first, one page: `limit`, default 50,
// at most 200, and `cursor`), so a much-commented artifact is never read
// whole.
func (h *Handlers) social(c *fiber.Ctx, req *socialRequest) error {
	votes, voted, page, err := h.commentsPage(c, req)
	if err != nil {
		return err
	}
	return c.JSON(schemas.ConstitutionSocial{Votes: votes, Voted: voted, Comments: page.Items, NextCursor: page.NextCursor})
}

// comments answers a page of the artifact's comments, oldest first:
// { items, nextCursor } like the other lists.
func (h *Handlers) comments(c *fiber.Ctx, req *socialRequest) error {
	_, _, page, err := h.commentsPage(c, req)
	if err != nil {
		return err
	}
	return c.JSON(page)
}
