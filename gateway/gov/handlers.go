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
	"github.com/fintech/platform/gateway/openapi"
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
	List(ctx context.Context, f store.Filter, after schemas.Position, limit int) ([]store.Proposal, error)
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

// Handlers serve /api/gov.
type Handlers struct {
	db        platform.Pinger
	writer    Writer
	reader    Reader
	analytics Analytics
	budgets   Budgets
	require   fiber.Handler
	admin     fiber.Handler
	now       func() time.Time
	routes    func() []server.Route
}

// NewHandlers checks the dependencies and builds the handlers. require
// authenticates the caller (the JWT middleware); admin admits only
// governance admins after it (403 otherwise); routes lists the server's
// routes for /openapi.json.
func NewHandlers(db platform.Pinger, writer Writer, reader Reader, analytics Analytics, budgets Budgets,
	require, admin fiber.Handler, now func() time.Time, routes func() []server.Route) (*Handlers, error) {
	if db == nil || writer == nil || reader == nil || analytics == nil || budgets == nil || require == nil ||
		admin == nil || now == nil || routes == nil {
		return nil, errors.New("gov handlers: nil dependency")
	}
	return &Handlers{db: db, writer: writer, reader: reader, analytics: analytics, budgets: budgets,
		require: require, admin: admin, now: now, routes: routes}, nil
}

// Budgets charges an abuse budget (ratelimit.Budgets): proposals and
// ballots move reputation, so they are bounded per account, per IP and in
// total (schemas.BudgetGovProposal, schemas.BudgetGovBallot).
type Budgets interface {
	Take(c *fiber.Ctx, b schemas.Budget, account string) (*ratelimit.Ticket, error)
}

// adminRole is who may open, close and execute proposals.
const adminRole = "governance admin"

// proposalPath is the request of an operation on one proposal.
type proposalPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("gov")
	type resp = server.Response
	var (
		answers     = server.Answers
		fails       = server.Fails
		notFound    = fails(http.StatusNotFound, "not_found: no such proposal")
		withTally   = answers(http.StatusOK, "the proposal after the transition, with its tally", schemas.Proposal{})
		invalidOpen = fails(http.StatusConflict, "invalid_state: only a draft can be opened")
	)
	platform.BasicsOf(g, "governance", platform.Health(h.db, h.health), schemas.GovHealth{}, openapi.Handler(h.routes, openapi.Doc{
		Title:       "Governance",
		Description: "Proposals, ballots in three vote modes (yes-no-abstain, ranked-choice, weighted) and their exact tallies.",
		Prefixes:    []string{Prefix},
	}))
	server.Get(g, "/stats", server.Op[server.NoRequest]{
		Summary:     "Proposals by status, mean turnout of closed proposals, top categories",
		Description: "Aggregate figures of governance: proposals by status, mean turnout of closed proposals, top categories. Read-only.",
		Public:      true, Handle: h.stats,
		Responses: []resp{answers(http.StatusOK, "roll-up from the analytics copy", schemas.GovStats{})},
	})
	server.Post(g, "/proposals", server.Op[createProposalRequest]{
		Summary:     "Create a draft proposal",
		Description: "Creates a draft proposal authored by the caller; a governance admin opens it for voting.",
		Class:       ratelimit.Write, Handle: h.createProposal,
		Responses: []resp{
			answers(http.StatusCreated, "the draft (or, replayed with the same Idempotency-Key and body, the original one)", schemas.Proposal{}),
			fails(http.StatusConflict, "idempotency_key_reused: the Idempotency-Key came with another body"),
		},
	}, h.require)
	server.Get(g, "/proposals", server.Op[listProposalsRequest]{
		Summary:     "Proposals, newest first; query status, category, authorUserId, cursor, limit",
		Description: "Pages through proposals, newest first, optionally of a status, category or author. Read-only.",
		Public:      true,
		Handle:      h.listProposals,
		Responses:   []resp{answers(http.StatusOK, "proposals, newest first", schemas.Page[schemas.Proposal]{})},
	})
	server.Get(g, "/proposals/:id", server.Op[proposalPath]{
		Summary:     "One proposal with its current tally",
		Description: "One proposal with its current tally. Read-only.",
		Public:      true, Handle: h.getProposal,
		Responses: []resp{answers(http.StatusOK, "the proposal with its current tally", schemas.Proposal{}), notFound},
	})
	server.Post(g, "/proposals/:id/votes", server.Op[voteRequest]{
		Summary:     "Cast the caller's one ballot on an open proposal",
		Description: "Records the caller's one ballot on an open proposal, in the proposal's vote mode; a second ballot is refused.",
		Class:       ratelimit.Write, Handle: h.vote,
		Responses: []resp{
			answers(http.StatusCreated, "the ballot and the tally after it", schemas.GovVoteResult{}),
			notFound,
			fails(http.StatusConflict, "voting_closed or already_voted: the proposal is not open, or the caller has voted on it"),
		},
	}, h.require)
	server.Get(g, "/proposals/:id/votes", server.Op[listVotesRequest]{
		Summary:     "Per-voter ballots of a closed proposal",
		Description: "The ballots of a closed proposal, voter by voter. Read-only.",
		Public:      true, Handle: h.listVotes,
		Responses: []resp{
			answers(http.StatusOK, "ballots in the order cast", schemas.Page[schemas.GovBallot]{}),
			notFound,
			fails(http.StatusConflict, "proposal_not_closed: ballots are published once the proposal is closed"),
		},
	})
	server.Post(g, "/proposals/:id/open", server.Op[proposalPath]{
		Summary:     "Open a draft for voting (governance admin)",
		Description: "Moves a draft proposal to open: ballots are accepted until it closes.",
		Class:       ratelimit.Write, Role: adminRole, Handle: h.open,
		Responses: []resp{withTally, notFound, invalidOpen},
	}, h.require, h.admin)
	server.Post(g, "/proposals/:id/close", server.Op[proposalPath]{
		Summary:     "Tally and close an open proposal (governance admin)",
		Description: "Counts the ballots of an open proposal, closes it and records the result (passed or rejected).",
		Class:       ratelimit.Write, Role: adminRole, Handle: h.close,
		Responses: []resp{withTally, notFound, fails(http.StatusConflict, "invalid_state: only an open proposal can be closed")},
	}, h.require, h.admin)
	server.Post(g, "/proposals/:id/tally", server.Op[proposalPath]{
		Summary:     "Recount the ballots of a proposal",
		Description: "Counts the ballots of a proposal again and answers the tally. Changes nothing.",
		Class:       ratelimit.Write, Handle: h.tally,
		Responses: []resp{answers(http.StatusOK, "the recount", schemas.ProposalTally{}), notFound},
	}, h.require)
	server.Post(g, "/proposals/:id/execute", server.Op[proposalPath]{
		Summary:     "Execute a passed proposal; idempotent (governance admin)",
		Description: "Marks a passed proposal executed; executing it again changes nothing.",
		Class:       ratelimit.Write, Role: adminRole,
		Handle: h.execute,
		Responses: []resp{
			answers(http.StatusOK, "the executed proposal, idempotent: true", schemas.Proposal{}),
			notFound,
			fails(http.StatusConflict, "invalid_state: the proposal did not pass"),
		},
	}, h.require, h.admin)
}

func (h *Handlers) health(ctx context.Context) (map[string]any, error) {
	n, err := h.reader.CountOpen(ctx)
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

// proposal loads the proposal named by the id path parameter; an unknown
// or malformed id is 404 not_found.
func (h *Handlers) proposal(c *fiber.Ctx, id string) (store.Proposal, error) {
	if !schemas.IsID(id) {
		return store.Proposal{}, errNoProposal()
	}
	p, err := h.reader.Get(c.UserContext(), id)
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
