package gov

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// close tallies an open proposal and records the decision: executed when
// passing, else rejected; one gov:decision ledger entry with the full
// tally, proposal.passed or proposal.rejected, and gov-author to the
// author, all through the outbox in the closing transaction.
func (h *Handlers) close(c *fiber.Ctx, req *proposalPath) error {
	p, err := h.proposal(c, req.ID)
	if err != nil {
		return err
	}
	if p.Status != schemas.ProposalOpen {
		return errInvalidState("only an open proposal can be closed")
	}
	actor := caller(c)
	now := h.now().UTC()
	closed, err := h.writer.Close(c.UserContext(), p.ID, actor, now, func(p store.Proposal, ballots []store.Ballot) (store.Decision, error) {
		return decide(p, ballots, actor, now)
	})
	if err != nil {
		return storeErr(err)
	}
	out, err := h.withTally(c, closed)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// decide tallies the ballots of a proposal being closed and builds what
// the close records and emits.
func decide(p store.Proposal, ballots []store.Ballot, actor string, now time.Time) (store.Decision, error) {
	r, res, err := tallyOf(p, ballots)
	if err != nil {
		return store.Decision{}, err
	}
	tv := res.View(r)
	tally, err := json.Marshal(tv)
	if err != nil {
		return store.Decision{}, err
	}
	d := store.Decision{Status: schemas.ProposalRejected, Ballots: res.Ballots, Tally: tally}
	typ := schemas.TypeProposalRejected
	if res.Passing {
		d.Status, typ = schemas.ProposalExecuted, schemas.TypeProposalPassed
	}
	p.Status = d.Status
	ev := eventOf(p)
	ev.Ballots, ev.QuorumMet, ev.Passing, ev.Tally = res.Ballots, res.QuorumMet, res.Passing, tally
	add := func(topic, typ, key string, data any) error {
		env, err := schemas.New(typ, key, actor, data, now)
		if err != nil {
			return err
		}
		row, err := pipeline.EventRow(topic, env)
		if err != nil {
			return err
		}
		d.Events = append(d.Events, row)
		return nil
	}
	if err := add(topics.EventsGov, typ, p.ID, ev); err != nil {
		return store.Decision{}, err
	}
	meta := map[string]any{
		"proposalId": p.ID, "title": p.Title, "category": p.Category, "voteMode": p.VoteMode,
		"options": p.Options, "authorUserId": p.AuthorUserID, "status": d.Status, "tally": tv,
		"closedAt": stamp(now),
	}
	if err := add(topics.LedgerAppend, schemas.TypeLedgerAppend, "", schemas.LedgerAppend{
		Kind: schemas.LedgerKindGovernance, SourceID: p.ID, ActorUserID: actor, Meta: meta,
	}); err != nil {
		return store.Decision{}, err
	}
	weight := int64(0)
	switch {
	case res.Passing:
		weight = weightAuthorPassed
	case res.QuorumMet:
		weight = weightAuthorRejected
	}
	if weight != 0 {
		if err := add(topics.ReputationCommands, schemas.TypeReputationEvent, p.AuthorUserID, schemas.ReputationEvent{
			UserID: p.AuthorUserID, Kind: schemas.RepKindGovAuthor, SourceModule: "gov", Weight: weight, SourceID: p.ID,
			Meta: map[string]any{"proposalId": p.ID, "status": d.Status},
		}); err != nil {
			return store.Decision{}, err
		}
	}
	return d, nil
}
