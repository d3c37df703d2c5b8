package constitution

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/constitution"
)

type voteView struct {
	ArtifactID string `json:"artifactId"`
	Votes      int64  `json:"votes"`
	Voted      bool   `json:"voted"`
}

// vote records the caller's vote: 201 when new, 200 when the caller had
// voted already (nothing changes).
func (h *Handlers) vote(c *fiber.Ctx) error {
	id, err := artifactID(c)
	if err != nil {
		return err
	}
	created, err := h.d.Catalog.Vote(c.UserContext(), id, caller(c), h.d.Now().UTC())
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
func (h *Handlers) unvote(c *fiber.Ctx) error {
	id, err := artifactID(c)
	if err != nil {
		return err
	}
	if err := h.d.Catalog.Unvote(c.UserContext(), id, caller(c)); err != nil {
		return notFoundAs(err)
	}
	return h.voteAnswer(c, id, http.StatusOK)
}

func (h *Handlers) voteAnswer(c *fiber.Ctx, id string, status int) error {
	votes, voted, _, err := h.d.Catalog.Social(c.UserContext(), id, caller(c))
	if err != nil {
		return notFoundAs(err)
	}
	return c.Status(status).JSON(voteView{ArtifactID: id, Votes: votes, Voted: voted})
}

type commentRequest struct {
	Text string `json:"text"`
}

type commentView struct {
	ID        string `json:"id"`
	UserID    string `json:"userId"`
	Text      string `json:"text"`
	CreatedAt string `json:"createdAt"`
}

func viewComment(c store.Comment) commentView {
	return commentView{ID: c.ID, UserID: c.UserID, Text: c.Text, CreatedAt: timestamp(c.CreatedAt)}
}

// comment adds a comment of 1 to 2,000 characters and answers 201 with it.
func (h *Handlers) comment(c *fiber.Ctx) error {
	id, err := artifactID(c)
	if err != nil {
		return err
	}
	var req commentRequest
	if err := bind.JSON(c, &req); err != nil {
		return err
	}
	var v bind.Validator
	text := cleanText(&v, "text", req.Text, maxCommentLen, true)
	if err := v.Err(); err != nil {
		return err
	}
	cm := store.Comment{ID: schemas.NewID(), ArtifactID: id, UserID: caller(c), Text: text, CreatedAt: h.d.Now().UTC()}
	if err := h.d.Catalog.AddComment(c.UserContext(), cm); err != nil {
		return notFoundAs(err)
	}
	return c.Status(http.StatusCreated).JSON(viewComment(cm))
}

// social answers { votes, voted, comments } (voted is false without a
// token; comments oldest first).
func (h *Handlers) social(c *fiber.Ctx) error {
	id, err := artifactID(c)
	if err != nil {
		return err
	}
	votes, voted, comments, err := h.d.Catalog.Social(c.UserContext(), id, caller(c))
	if err != nil {
		return notFoundAs(err)
	}
	out := make([]commentView, len(comments))
	for i, cm := range comments {
		out[i] = viewComment(cm)
	}
	return c.JSON(map[string]any{"votes": votes, "voted": voted, "comments": out})
}
