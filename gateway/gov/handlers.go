// Package gov serves governance under /api/gov: proposals with three vote
// modes (yes-no-abstain, ranked-choice, weighted), their admin lifecycle
// (open, close, execute), exact tallies, ballots, stats and health.
//
// Governance has a low write rate and no balances, so the handlers write
// Postgres directly (storage/gov) and emit their events, the gov:decision
// ledger entry and the reputation events through the outbox in the same
// transaction (architecture.md).
package gov

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
	store "github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// Prefix is the path prefix of the module.
const Prefix = "/api/gov"

// Reputation weights of spec: "Reputation events emitted by other modules".
const (
	weightAuthorPassed   = 5
	weightAuthorRejected = 1 // rejected with quorum; nothing without
	weightVoter          = 1
)

func errInvalidState(msg string) *apierr.Error {
	return apierr.New(http.StatusConflict, schemas.CodeInvalidState, msg)
}

func errVotingClosed() *apierr.Error {
	return apierr.New(http.StatusConflict, schemas.CodeVotingClosed, "the proposal is not open for voting")
}

func errAlreadyVoted() *apierr.Error {
	return apierr.New(http.StatusConflict, schemas.CodeAlreadyVoted, "you have already voted on this proposal")
}

func errNotClosed() *apierr.Error {
	return apierr.New(http.StatusConflict, schemas.CodeProposalNotClosed, "ballots are published once the proposal is closed")
}

func errNoProposal() *apierr.Error { return apierr.NotFound("no such proposal") }

// Writer is what the handlers change in storage; each call commits its
// outbox rows with the change.
type Writer interface {
	Create(ctx context.Context, p store.Proposal, events []pipeline.OutboxRow, idem *pipeline.Processed) (*pipeline.Processed, error)
	Open(ctx context.Context, id string, openAt, closeAt time.Time, events []pipeline.OutboxRow) (store.Proposal, error)
	Vote(ctx context.Context, b store.Ballot, events []pipeline.OutboxRow) ([]store.Ballot, error)
	Close(ctx context.Context, id, actor string, now time.Time,
		decide func(p store.Proposal, ballots []store.Ballot) (store.Decision, error)) (store.Proposal, error)
}

// Reader is what the handlers read from storage.
type Reader interface {
	Get(ctx context.Context, id string) (store.Proposal, error)
	List(ctx context.Context, f store.Filter, after string, limit int) ([]store.Proposal, error)
	Ballots(ctx context.Context, proposalID string) ([]store.Ballot, error)
	ListBallots(ctx context.Context, proposalID, after string, limit int) ([]store.Ballot, error)
	CountOpen(ctx context.Context) (int64, error)
}

var (
	_ Writer = (*store.Store)(nil)
	_ Reader = (*store.Store)(nil)
)

// Analytics reads the governance roll-up from the ClickHouse copy.
type Analytics interface {
	GovStats(ctx context.Context) ([]clickhouse.GovStatusCount, error)
}

var _ Analytics = (*clickhouse.Analytics)(nil)

// Deps are the handlers' dependencies.
type Deps struct {
	DB        platform.Pinger
	Writer    Writer
	Reader    Reader
	Analytics Analytics
	// Require authenticates the caller (the JWT middleware).
	Require fiber.Handler
	// Admin admits only governance admins (after Require); 403 otherwise.
	Admin  fiber.Handler
	Now    func() time.Time
	Routes func() []server.Route
}

// Handlers serve /api/gov.
type Handlers struct {
	d Deps
}

// NewHandlers checks the dependencies and builds the handlers.
func NewHandlers(d Deps) (*Handlers, error) {
	if d.DB == nil || d.Writer == nil || d.Reader == nil || d.Analytics == nil || d.Require == nil ||
		d.Admin == nil || d.Now == nil || d.Routes == nil {
		return nil, errors.New("gov handlers: nil dependency")
	}
	return &Handlers{d: d}, nil
}

// publicPaths are the routes that need no bearer token, by method and path.
var publicPaths = map[string]bool{
	"GET " + Prefix + "/health": true, "GET " + Prefix + "/openapi.json": true, "GET " + Prefix + "/stats": true,
	"GET " + Prefix + "/proposals": true, "GET " + Prefix + "/proposals/:id": true, "GET " + Prefix + "/proposals/:id/votes": true,
}

// Register mounts the routes.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix)
	req, admin := h.d.Require, h.d.Admin
	g.Get("/health", "Liveness, database reachability, open-proposal count", platform.Health(h.d.DB, h.health))
	g.Get("/openapi.json", "OpenAPI 3.0 slice of the governance module", h.openapi)
	g.Get("/stats", "Proposals by status, mean turnout of closed proposals, top categories", h.stats)
	g.Post("/proposals", ratelimit.Write, "Create a draft proposal", req, h.createProposal)
	g.Get("/proposals", "Proposals, newest first; query status, category, authorUserId, cursor, limit", h.listProposals)
	g.Get("/proposals/:id", "One proposal with its current tally", h.getProposal)
	g.Post("/proposals/:id/votes", ratelimit.Write, "Cast the caller's one ballot on an open proposal", req, h.vote)
	g.Get("/proposals/:id/votes", "Per-voter ballots of a closed proposal", h.listVotes)
	g.Post("/proposals/:id/open", ratelimit.Write, "Open a draft for voting (governance admin)", req, admin, h.open)
	g.Post("/proposals/:id/close", ratelimit.Write, "Tally and close an open proposal (governance admin)", req, admin, h.close)
	g.Post("/proposals/:id/tally", ratelimit.Write, "Recount the ballots of a proposal", req, h.tally)
	g.Post("/proposals/:id/execute", ratelimit.Write, "Execute a passed proposal; idempotent (governance admin)", req, admin, h.execute)
}

func (h *Handlers) health(ctx context.Context) (map[string]any, error) {
	n, err := h.d.Reader.CountOpen(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"openProposals": n}, nil
}

// caller returns the authenticated user id (Require ran before).
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}

// proposal loads the proposal named by the :id path parameter; an unknown
// or malformed id is 404 not_found.
func (h *Handlers) proposal(c *fiber.Ctx) (store.Proposal, error) {
	id := c.Params("id")
	if !schemas.IsID(id) {
		return store.Proposal{}, errNoProposal()
	}
	p, err := h.d.Reader.Get(c.UserContext(), id)
	if err != nil {
		return store.Proposal{}, storeErr(err)
	}
	return p, nil
}

// storeErr maps the repository's errors to API errors.
func storeErr(err error) error {
	switch {
	case errors.Is(err, postgres.ErrNotFound):
		return errNoProposal()
	case errors.Is(err, store.ErrInvalidState):
		return errInvalidState("the proposal's status does not allow this")
	case errors.Is(err, store.ErrVotingClosed):
		return errVotingClosed()
	case errors.Is(err, store.ErrAlreadyVoted):
		return errAlreadyVoted()
	}
	return err
}
