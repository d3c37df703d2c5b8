package schemas

import "encoding/json"

// Governance message types. Governance writes Postgres directly from the
// gateway (architecture.md: low write rate, no balances); its events leave
// through the outbox to events.gov keyed by the proposal id.
const (
	// TypeProposalCreated: a draft was created.
	TypeProposalCreated = "proposal.created"
	// TypeProposalOpened: an admin opened voting (votesOpenAt/votesCloseAt set).
	TypeProposalOpened = "proposal.opened"
	// TypeProposalPassed: closed with quorum and a passing tally; status executed.
	TypeProposalPassed = "proposal.passed"
	// TypeProposalRejected: closed without quorum or without a passing tally.
	TypeProposalRejected = "proposal.rejected"
)

// govVersions lists the governance module's message types and their schema versions.
var govVersions = map[string]int{
	TypeProposalCreated:  1,
	TypeProposalOpened:   1,
	TypeProposalPassed:   1,
	TypeProposalRejected: 1,
}

// Reputation kinds emitted by governance (spec: "Reputation events emitted
// by other modules").
const (
	// RepKindGovAuthor goes to the author on close: +5 passed, +1 rejected
	// with quorum, nothing without quorum. SourceID is the proposal id.
	RepKindGovAuthor = "gov-author"
	// RepKindGovVoter is +1 to a voter once per proposal. SourceID is the
	// proposal id, so a re-sent emission is applied once.
	RepKindGovVoter = "gov-voter"
)

// Vote modes (spec: Proposal and vote).
const (
	VoteModeYesNoAbstain = "yes-no-abstain"
	VoteModeRanked       = "ranked-choice"
	VoteModeWeighted     = "weighted"
)

// VoteModes lists the vote modes.
var VoteModes = []string{VoteModeYesNoAbstain, VoteModeRanked, VoteModeWeighted}

// Proposal statuses (decisions.md: a passing close executes at once).
const (
	ProposalDraft    = "draft"
	ProposalOpen     = "open"
	ProposalExecuted = "executed"
	ProposalRejected = "rejected"
)

// ProposalStatuses lists the statuses in lifecycle order.
var ProposalStatuses = []string{ProposalDraft, ProposalOpen, ProposalExecuted, ProposalRejected}

// Yes-no-abstain choices.
const (
	ChoiceYes     = "yes"
	ChoiceNo      = "no"
	ChoiceAbstain = "abstain"
)

// ProposalEvent is the data of every proposal.* event. Ballots, QuorumMet,
// Passing and Tally are set on the close events (proposal.passed and
// proposal.rejected); Tally is the same JSON as the API's tally.
type ProposalEvent struct {
	ProposalID   string          `json:"proposalId"`
	AuthorUserID string          `json:"authorUserId"`
	Title        string          `json:"title"`
	Category     string          `json:"category"`
	VoteMode     string          `json:"voteMode"`
	Status       string          `json:"status"`
	Quorum       int64           `json:"quorum"`
	Threshold    json.Number     `json:"threshold"`
	VotesOpenAt  string          `json:"votesOpenAt,omitempty"`
	VotesCloseAt string          `json:"votesCloseAt,omitempty"`
	Ballots      int64           `json:"ballots"`
	QuorumMet    bool            `json:"quorumMet"`
	Passing      bool            `json:"passing"`
	Tally        json.RawMessage `json:"tally,omitempty"`
}
