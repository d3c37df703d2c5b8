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
