package identity

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// sessionPath names one session.
type sessionPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

func (h *Handlers) registerSessions(g server.Router, require fiber.Handler) {
	server.Post(g, "/logout", server.Op[server.NoRequest]{
		Summary:     "End the caller's session",
		Description: "Ends the session of the bearer token: the token answers 401 auth_required from then on (at once on this gateway, within seconds on every other). The user's other sessions go on.",
		Class:       ratelimit.Write, Handle: h.logout,
		Responses: []server.Response{{Status: http.StatusNoContent, Description: "the session ended"}},
	}, require)
	server.Get(g, "/sessions", server.Op[server.NoRequest]{
		Summary:     "The caller's live sessions",
		Description: "Every live login session of the caller (one per login or registration), newest first; `current` marks the one of this token. Read-only.",
		Handle:      h.listSessions,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the live sessions", schemas.AuthSessions{})},
	}, require)
	server.Handle(g, http.MethodDelete, "/sessions/:id", server.Op[sessionPath]{
		Summary:     "End one of the caller's sessions",
		Description: "Ends one live session of the caller; its token answers 401 auth_required from then on. Another user's session, or one already ended, answers 404.",
		Class:       ratelimit.Write, Handle: h.endSession,
		Responses: []server.Response{
			{Status: http.StatusNoContent, Description: "the session ended"},
			server.Fails(http.StatusNotFound, "not_found: no live session of the caller has this id"),
		},
	}, require)
	server.Handle(g, http.MethodDelete, "/sessions", server.Op[server.NoRequest]{
		Summary:     "End every session of the caller but the current one",
		Description: "Ends every live session of the caller except the one of this token, and revokes every API key of the caller (sign out everywhere else).",
		Class:       ratelimit.Write, Handle: h.endOtherSessions,
		Responses: []server.Response{{Status: http.StatusNoContent, Description: "the other sessions ended"}},
	}, require)
}

// ended tells this process's session check about sessions just ended, so
// their tokens are refused here at once.
func (h *Handlers) ended(ids ...string) {
	h.authn.Sessions().Ended(ids...)
}

func (h *Handlers) logout(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	err := h.users.EndSession(c.UserContext(), p.UserID, p.SessionID, h.now().UTC())
	if err != nil && !errors.Is(err, postgres.ErrNotFound) {
		return err
	}
	h.ended(p.SessionID)
	return c.SendStatus(http.StatusNoContent)
}

func (h *Handlers) listSessions(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	list, err := h.users.Sessions(c.UserContext(), p.UserID, h.now().UTC())
	if err != nil {
		return err
	}
	out := schemas.AuthSessions{Items: make([]schemas.AuthSession, 0, len(list))}
	for _, s := range list {
		out.Items = append(out.Items, schemas.AuthSession{ID: s.ID, CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339),
			LastSeenAt: s.LastSeenAt.UTC().Format(time.RFC3339), IP: s.IP, UserAgent: s.UserAgent, Current: s.ID == p.SessionID})
	}
	return c.JSON(out)
}

func (h *Handlers) endSession(c *fiber.Ctx, req *sessionPath) error {
	p, _ := auth.User(c)
	err := h.users.EndSession(c.UserContext(), p.UserID, req.ID, h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no live session of yours has this id")
	}
	if err != nil {
		return err
	}
	h.ended(req.ID)
	return c.SendStatus(http.StatusNoContent)
}

func (h *Handlers) endOtherSessions(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	ids, err := h.users.EndOtherSessions(c.UserContext(), p.UserID, p.SessionID, h.now().UTC())
	if err != nil {
		return err
	}
	h.ended(ids...)
	return c.SendStatus(http.StatusNoContent)
}
