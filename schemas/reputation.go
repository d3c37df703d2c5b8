package schemas

import (
	"strings"
	"time"
)

// Reputation message types.
const (
	// TypeReputationEvent adds a weighted event to a user's score. It is sent
	// on reputation.commands keyed by the user id.
	TypeReputationEvent = "reputation.event"
	// Events of the reputation module on events.reputation.
	TypeScoreUpdated = "score.updated"
	TypeRankPromoted = "rank.promoted"
)

// Reputation event kinds and weights emitted by other modules (spec:
// "Reputation events emitted by other modules").
const (
	RepKindWalletPayout  = "wallet-payout"  // +3 caller of withdraw
	RepKindWalletActive  = "wallet-active"  // +1 sender and receiver of a transfer
	RepKindWalletDeposit = "wallet-deposit" // +2 depositor
	RepKindMaskRiskFlag  = "mask-risk-flag" // -2 merchant of a risky mask charge
)

// reputationVersions lists the reputation module's message types and their schema versions.
var reputationVersions = map[string]int{
	TypeReputationEvent: 1,
	TypeScoreUpdated:    1,
	TypeRankPromoted:    1,
}

// ReputationEvent is the data of a TypeReputationEvent record. SourceID names
// the originating record so a re-sent emission is applied once.
type ReputationEvent struct {
	UserID       string         `json:"userId"`
	Kind         string         `json:"kind"`
	SourceModule string         `json:"sourceModule"`
	Weight       int64          `json:"weight"`
	SourceID     string         `json:"sourceId,omitempty"`
	Meta         map[string]any `json:"meta,omitempty"`
}

// Validate is the one rule for a reputation event, applied by the gateway
// before it sends an admin's event and by the applier to every command (a
// module's too). The meta object's size is checked where it is encoded.
func (e ReputationEvent) Validate() error {
	p := FieldProblems{}
	if p.Required("userId", e.UserID) {
		p.MaxLen("userId", e.UserID, ReputationMaxUserID)
	}
	if p.Required("kind", e.Kind) {
		p.MaxLen("kind", e.Kind, ReputationMaxKind)
	}
	p.MaxLen("sourceModule", e.SourceModule, ReputationMaxModule)
	p.MaxLen("sourceId", e.SourceID, ReputationMaxSourceID)
	for field, v := range map[string]string{"userId": e.UserID, "kind": e.Kind, "sourceModule": e.SourceModule, "sourceId": e.SourceID} {
		p.Check(!strings.ContainsRune(v, 0), field, "must not contain NUL characters")
	}
	p.Check(e.Weight >= -ReputationMaxWeight && e.Weight <= ReputationMaxWeight, "weight", "must be between -1000 and 1000")
	return p.Err()
}

// ScoreUpdated is the data of TypeScoreUpdated: one applied event and the
// score it left. Seq counts the user's applied events (1, 2, ...), so the
// latest score of a user is the one with the highest Seq.
type ScoreUpdated struct {
	EventID       string `json:"eventId"`
	UserID        string `json:"userId"`
	Kind          string `json:"kind"`
	SourceModule  string `json:"sourceModule"`
	Weight        int64  `json:"weight"`
	PreviousScore int64  `json:"previousScore"`
	NewScore      int64  `json:"newScore"`
	PreviousRank  string `json:"previousRank"`
	NewRank       string `json:"newRank"`
	Promoted      bool   `json:"promoted"`
	Seq           int64  `json:"seq"`
	// SourceID is the emitter's id of the originating record (a proposal
	// for gov-voter): added in schema version 1 as an optional field, so
	// readers of older records see "".
	SourceID string `json:"sourceId,omitempty"`
}

// RankPromoted is the data of TypeRankPromoted.
type RankPromoted struct {
	UserID       string `json:"userId"`
	PreviousRank string `json:"previousRank"`
	NewRank      string `json:"newRank"`
	Score        int64  `json:"score"`
	EventID      string `json:"eventId"`
}

// Ranks by score (decisions.md): seedling < 10 <= sprout < 50 <= steady <
// 200 <= strong < 1000 <= titan; negative scores are seedling.
const (
	RankSeedling = "seedling"
	RankSprout   = "sprout"
	RankSteady   = "steady"
	RankStrong   = "strong"
	RankTitan    = "titan"
)

// Ranks lists the ranks from lowest to highest.
func Ranks() []string {
	return []string{RankSeedling, RankSprout, RankSteady, RankStrong, RankTitan}
}

// Limits of a reputation event (decisions.md: weight within ±1000).
const (
	ReputationMaxWeight   = 1000
	ReputationMaxUserID   = 128
	ReputationMaxKind     = 64
	ReputationMaxModule   = 64
	ReputationMaxSourceID = 256
	ReputationMaxMeta     = 16 << 10
)

// RankOf returns the rank of a score.
func RankOf(score int64) string {
	switch {
	case score >= 1000:
		return RankTitan
	case score >= 200:
		return RankStrong
	case score >= 50:
		return RankSteady
	case score >= 10:
		return RankSprout
	default:
		return RankSeedling
	}
}

// RankLevel orders ranks (seedling 0 … titan 4); -1 for an unknown name.
func RankLevel(rank string) int {
	for i, r := range Ranks() {
		if r == rank {
			return i
		}
	}
	return -1
}

// ReputationEventResult is the answer to a posted event (POST
// /api/reputation/events): the score and rank before and after. Idempotent
// is true only in the answer to a replay of the same (userId, kind,
// sourceId).
type ReputationEventResult struct {
	EventID       string `json:"eventId" required:"true" format:"ksuid"`
	UserID        string `json:"userId" required:"true" format:"ksuid"`
	Weight        int64  `json:"weight" required:"true" minimum:"-1000" maximum:"1000"`
	PreviousScore int64  `json:"previousScore" required:"true"`
	NewScore      int64  `json:"newScore" required:"true"`
	PreviousRank  string `json:"previousRank" required:"true" enum:"seedling,sprout,steady,strong,titan"`
	NewRank       string `json:"newRank" required:"true" enum:"seedling,sprout,steady,strong,titan"`
	Promoted      bool   `json:"promoted" required:"true"`
	Idempotent    bool   `json:"idempotent,omitempty"`
}

// ReputationEventView is one applied event of a user, as GET
// /api/reputation/me lists it.
type ReputationEventView struct {
	ID           string    `json:"id" required:"true" format:"ksuid"`
	Kind         string    `json:"kind" required:"true"`
	SourceModule string    `json:"sourceModule" required:"true"`
	Weight       int64     `json:"weight" required:"true" minimum:"-1000" maximum:"1000"`
	SourceID     *string   `json:"sourceId" required:"true"`
	Meta         RawObject `json:"meta" required:"true" description:"a JSON object, or null"`
	ScoreAfter   int64     `json:"scoreAfter" required:"true"`
	RankAfter    string    `json:"rankAfter" required:"true" enum:"seedling,sprout,steady,strong,titan"`
	CreatedAt    time.Time `json:"createdAt" required:"true"`
}

// ReputationMe is the caller's score, rank and last 50 events.
type ReputationMe struct {
	UserID string                `json:"userId" required:"true" format:"ksuid"`
	Score  int64                 `json:"score" required:"true"`
	Rank   string                `json:"rank" required:"true" enum:"seedling,sprout,steady,strong,titan"`
	Events []ReputationEventView `json:"events" required:"true" nullable:"false"`
}

// ReputationLeader is one row of the leaderboard.
type ReputationLeader struct {
	Position int    `json:"position" required:"true" minimum:"1"`
	UserID   string `json:"userId" required:"true" format:"ksuid"`
	Score    int64  `json:"score" required:"true"`
	Rank     string `json:"rank" required:"true" enum:"seedling,sprout,steady,strong,titan"`
	// Gained is the sum of weights since the query's since; only set when
	// one was given.
	Gained *int64 `json:"gained,omitempty" description:"sum of weights since since, when given"`
}

// ReputationLeaderboard is the top of the leaderboard from the analytics
// copy, with the query it answers.
type ReputationLeaderboard struct {
	Items  []ReputationLeader `json:"items" required:"true" nullable:"false"`
	Limit  int                `json:"limit" required:"true" minimum:"1" maximum:"100"`
	Rank   *string            `json:"rank" required:"true" enum:"seedling,sprout,steady,strong,titan"`
	Since  *string            `json:"since" required:"true" format:"date-time"`
	Source string             `json:"source" required:"true" enum:"clickhouse"`
}

// ReputationRank is a user's public score and rank: no personal data.
type ReputationRank struct {
	UserID string `json:"userId" required:"true" format:"ksuid"`
	Score  int64  `json:"score" required:"true"`
	Rank   string `json:"rank" required:"true" enum:"seedling,sprout,steady,strong,titan"`
}

// ReputationStats are the reputation statistics: users per rank, mean and
// median score, events ingested in the last 24 hours.
type ReputationStats struct {
	RankedUsers   int64            `json:"rankedUsers" required:"true"`
	CountPerRank  map[string]int64 `json:"countPerRank" required:"true"`
	MeanScore     float64          `json:"meanScore" required:"true"`
	MedianScore   float64          `json:"medianScore" required:"true"`
	EventsLast24h int64            `json:"eventsLast24h" required:"true"`
	AsOf          string           `json:"asOf" required:"true" format:"date-time"`
	Source        string           `json:"source" required:"true" enum:"clickhouse"`
}
