package gov

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// Proposal limits and defaults of decisions.md.
const (
	MaxCategory            = 64
	MaxOption              = 64
	MinOptions, MaxOptions = 2, 20
	DefaultQuorum          = 1
	MaxQuorum              = 1_000_000_000
	DefaultThreshold       = "0.5"
	DefaultDuration        = 604_800
	MaxDuration            = 31_536_000
)

// createProposalRequest is a draft proposal. Options are read for
// ranked-choice and weighted proposals only.
type createProposalRequest struct {
	IdempotencyKey        string   `header:"Idempotency-Key" json:"-" description:"makes retries safe: the same key and body answer the original proposal"`
	Title                 string   `json:"title" required:"true" minLength:"1" maxLength:"200"`
	Summary               string   `json:"summary" maxLength:"500"`
	Body                  string   `json:"body" maxLength:"20000"`
	Category              string   `json:"category" required:"true" minLength:"1" maxLength:"64"`
	VoteMode              string   `json:"voteMode" required:"true" enum:"yes-no-abstain,ranked-choice,weighted"`
	Quorum                intNum   `json:"quorum" minimum:"1" maximum:"1000000000" default:"1" description:"ballots needed for a decision"`
	Threshold             fracNum  `json:"threshold"`
	Options               []string `json:"options" maxItems:"20" uniqueItems:"true" description:"ranked-choice and weighted: 2 to 20 distinct option names of at most 64 characters (not \"rounds\")"`
	VotingDurationSeconds intNum   `json:"votingDurationSeconds" minimum:"1" maximum:"31536000" default:"604800"`
}

// validate checks the request and returns the draft's fields (without ids
// and times).
func (req createProposalRequest) validate() (store.Proposal, error) {
	var v bind.Validator
	p := store.Proposal{
		Title:    strings.TrimSpace(req.Title),
		Summary:  strings.TrimSpace(req.Summary),
		Body:     req.Body,
		Category: strings.TrimSpace(req.Category),
		VoteMode: strings.TrimSpace(req.VoteMode),
		Status:   schemas.ProposalDraft,
		Options:  []string{},
	}
	// title, summary, body, category, voteMode, quorum and the duration are
	// bound by their tags (gateway/bind); what is left is what tags cannot say.
	p.Quorum = req.Quorum.or(DefaultQuorum)
	p.Threshold = fraction(&v, "threshold", req.Threshold.num, DefaultThreshold)
	p.VotingDurationSeconds = req.VotingDurationSeconds.or(DefaultDuration)
	if p.VoteMode == schemas.VoteModeRanked || p.VoteMode == schemas.VoteModeWeighted {
		p.Options = validOptions(&v, req.Options)
	}
	return p, v.Err()
}

// validOptions checks 2–20 distinct, non-empty option names.
func validOptions(v *bind.Validator, in []string) []string {
	if len(in) < MinOptions || len(in) > MaxOptions {
		v.Fail("options", "must list 2 to 20 options")
		return nil
	}
	seen := make(map[string]bool, len(in))
	out := make([]string, len(in))
	for i, o := range in {
		o = strings.TrimSpace(o)
		field := "options[" + strconv.Itoa(i) + "]"
		switch {
		case o == "":
			v.Fail(field, "must not be empty")
		case o == "rounds":
			v.Fail(field, `"rounds" is reserved`)
		case seen[o]:
			v.Fail(field, "repeats another option")
		default:
			text(v, field, o, MaxOption)
		}
		seen[o] = true
		out[i] = o
	}
	return out
}

// createProposal creates a draft owned by the caller: 201 with the proposal.
// With an Idempotency-Key (scoped to the caller and this endpoint) a retry
// with the same body answers the original proposal byte for byte with
// Idempotent-Replayed: true; a different body is 409 idempotency_key_reused.
func (h *Handlers) createProposal(c *fiber.Ctx, req *createProposalRequest) error {
	p, err := req.validate()
	if err != nil {
		return err
	}
	ticket, err := h.budgets.Take(c, schemas.BudgetGovProposal, caller(c))
	if err != nil {
		return err
	}
	// Only a proposal created spends the budget: a refusal or an
	// idempotent replay gives the unit back.
	created := false
	defer func() {
		if !created {
			ticket.Refund(c.UserContext())
		}
	}()
	now := h.now().UTC()
	p.ID, p.AuthorUserID, p.CreatedAt = schemas.NewID(), caller(c), now
	env, err := schemas.New(schemas.TypeProposalCreated, p.ID, p.AuthorUserID, eventOf(p), now)
	if err != nil {
		return err
	}
	row, err := pipeline.EventRow(topics.EventsGov, env)
	if err != nil {
		return err
	}
	body, err := json.Marshal(view(p))
	if err != nil {
		return err
	}
	var idem *pipeline.Processed
	if req := commands.RequestIdempotency(c, p.AuthorUserID, "POST "+Prefix+"/proposals"); req.Key != "" {
		idem = &pipeline.Processed{CommandID: req.CommandID(), CommandType: commandCreate,
			RequestHash: req.RequestHash, Status: http.StatusCreated, Body: body}
	}
	prior, err := h.writer.Create(c.UserContext(), p, []pipeline.OutboxRow{row}, idem)
	if err != nil {
		return err
	}
	created = prior == nil
	if prior != nil {
		if prior.RequestHash != idem.RequestHash {
			return apierr.IdempotencyReused()
		}
		c.Set(server.HeaderIdempotentReplayed, "true")
		body = prior.Body
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Status(http.StatusCreated).Send(body)
}

// commandCreate names proposal creation among the recorded answers of
// requests with an Idempotency-Key (processed_commands).
const commandCreate = "gov.proposal.create"
