package schemas

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
