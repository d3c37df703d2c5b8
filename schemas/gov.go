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

// Proposal is the API shape of a proposal (decisions.md, "Governance, in
// detail"). Timestamps are RFC 3339 UTC with whole seconds. Tally is set on
// single reads and on the lifecycle answers; Idempotent only on execute.
type Proposal struct {
	ID                    string      `json:"id" required:"true" format:"ksuid"`
	Title                 string      `json:"title" required:"true"`
	Summary               string      `json:"summary" required:"true"`
	Body                  string      `json:"body" required:"true"`
	Category              string      `json:"category" required:"true"`
	VoteMode              string      `json:"voteMode" required:"true" enum:"yes-no-abstain,ranked-choice,weighted"`
	Options               []string    `json:"options" required:"true" nullable:"false" description:"the options of a ranked-choice or weighted proposal; empty for yes-no-abstain"`
	Quorum                int64       `json:"quorum" required:"true" minimum:"1" description:"ballots needed for a decision"`
	Threshold             json.Number `json:"threshold" required:"true" description:"the share a passing tally must exceed, 0 < threshold < 1"`
	VotingDurationSeconds int64       `json:"votingDurationSeconds" required:"true"`
	Status                string      `json:"status" required:"true" enum:"draft,open,executed,rejected"`
	AuthorUserID          string      `json:"authorUserId" required:"true" format:"ksuid"`
	VotesOpenAt           *string     `json:"votesOpenAt" required:"true" format:"date-time"`
	VotesCloseAt          *string     `json:"votesCloseAt" required:"true" format:"date-time"`
	ClosedAt              *string     `json:"closedAt" required:"true" format:"date-time"`
	CreatedAt             string      `json:"createdAt" required:"true" format:"date-time"`
	Tally                 *GovTally   `json:"tally,omitempty"`
	Idempotent            *bool       `json:"idempotent,omitempty"`
}

// GovTally is a proposal's tally as the API and the close event show it.
// Numbers are exact decimals (non-integral ones rounded to 6 places for
// display; decisions are taken on the exact values).
type GovTally struct {
	Ballots int64 `json:"ballots" required:"true"`
	// TallyNow is the value of every choice (yes-no-abstain: yes, no,
	// abstain; otherwise every option, ranked-choice as of the final round,
	// with its instant-runoff rounds under "rounds").
	TallyNow  map[string]any `json:"tallyNow" required:"true" nullable:"false" description:"the value of every choice; ranked-choice adds its instant-runoff rounds under rounds"`
	Leader    *string        `json:"leader" required:"true" description:"the option with the largest total; null for yes-no-abstain or without ballots"`
	Share     *json.Number   `json:"share" required:"true" description:"what passing compares with the threshold; null when nothing was counted"`
	Quorum    int64          `json:"quorum" required:"true"`
	Threshold json.Number    `json:"threshold" required:"true"`
	QuorumMet bool           `json:"quorumMet" required:"true"`
	Passing   bool           `json:"passing" required:"true"`
}

// ProposalTally is the answer of a recount (POST /proposals/{id}/tally).
type ProposalTally struct {
	ProposalID string `json:"proposalId" required:"true" format:"ksuid"`
	Status     string `json:"status" required:"true" enum:"draft,open,executed,rejected"`
	VoteMode   string `json:"voteMode" required:"true" enum:"yes-no-abstain,ranked-choice,weighted"`
	GovTally
}

// GovVoteResult is the answer to a ballot: its id and the tally after it.
type GovVoteResult struct {
	VoteID     string         `json:"voteId" required:"true" format:"ksuid"`
	ProposalID string         `json:"proposalId" required:"true" format:"ksuid"`
	TallyNow   map[string]any `json:"tallyNow" required:"true" nullable:"false" description:"the value of every choice after this ballot"`
	Ballots    int64          `json:"ballots" required:"true"`
	QuorumMet  bool           `json:"quorumMet" required:"true"`
	Passing    bool           `json:"passing" required:"true"`
}

// GovBallot is a published ballot of a closed proposal: the voter's user id
// is its only personal data (the free-text reason is not published).
type GovBallot struct {
	VoteID    string                 `json:"voteId" required:"true" format:"ksuid"`
	UserID    string                 `json:"userId" required:"true" format:"ksuid"`
	Choice    *string                `json:"choice,omitempty" enum:"yes,no,abstain" description:"yes-no-abstain ballots"`
	Ranking   []string               `json:"ranking,omitempty" description:"ranked-choice ballots: every option, most preferred first"`
	Weights   map[string]json.Number `json:"weights,omitempty" description:"weighted ballots: a positive weight per option given one"`
	CreatedAt string                 `json:"createdAt" required:"true" format:"date-time"`
}

// GovStats is the governance roll-up (GET /api/gov/stats), read from the
// ClickHouse copy of the proposal events.
type GovStats struct {
	ByStatus map[string]int64 `json:"byStatus" required:"true" nullable:"false" description:"proposals per status (draft, open, executed, rejected), every status listed"`
	// MeanTurnout is the mean ballot count of closed (executed or rejected)
	// proposals, 0 when none is closed.
	MeanTurnout   json.Number        `json:"meanTurnout" required:"true" description:"mean ballot count of closed proposals, 0 when none is closed"`
	TopCategories []GovCategoryCount `json:"topCategories" required:"true" nullable:"false"`
	// AsOf and Source say when and from where the answer was read (the
	// ClickHouse copy lags Postgres by the sink's delay).
	AsOf   string `json:"asOf,omitempty" format:"date-time"`
	Source string `json:"source,omitempty" enum:"clickhouse"`
}

// GovCategoryCount is the number of proposals of a category (every status).
type GovCategoryCount struct {
	Category string `json:"category" required:"true"`
	Count    int64  `json:"count" required:"true"`
}

// GovHealth is the answer of GET /api/gov/health.
type GovHealth struct {
	Status        string `json:"status" required:"true" enum:"ok,degraded"`
	Database      string `json:"database" required:"true" enum:"ok,unreachable"`
	OpenProposals int64  `json:"openProposals" required:"true"`
}
