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
	votes, voted, _, err := h.catalog.Social(c.UserContext(), id, caller(c))
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

// social answers { votes, voted, comments } (voted is false without a
// token; comments oldest first).
func (h *Handlers) social(c *fiber.Ctx, req *artifactPath) error {
	id := req.ID
	votes, voted, comments, err := h.catalog.Social(c.UserContext(), id, caller(c))
	if err != nil {
		return notFoundAs(err)
	}
	out := schemas.ConstitutionSocial{Votes: votes, Voted: voted, Comments: make([]schemas.ConstitutionComment, len(comments))}
	for i, cm := range comments {
		out.Comments[i] = viewComment(cm)
	}
	return c.JSON(out)
}
