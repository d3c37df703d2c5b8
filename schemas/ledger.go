package schemas

// Ledger message types.
const (
	// TypeLedgerAppend asks the appender to add an entry to the chain. It is
	// sent on the one-partition ledger.append topic (through the outbox by
	// other modules) and deduplicated on (Kind, SourceID).
	TypeLedgerAppend = "ledger.append"
	// Events of the ledger module on events.ledger.
	TypeLedgerEntryAdded    = "ledger.entry_added"
	TypeLedgerChainVerified = "ledger.chain_verified"
)

// Ledger entry kinds emitted by other modules (spec: "Ledger entries emitted
// by other modules").
const (
	LedgerKindTransfer   = "fiat:transfer"
	LedgerKindDeposit    = "fiat:deposit"
	LedgerKindWithdrawal = "fiat:withdrawal"
	LedgerKindMaskCharge = "mask:charge"
	LedgerKindDonation   = "charity:donation"
	LedgerKindGovernance = "gov:decision"
)

// ledgerVersions lists the ledger module's message types and their schema versions.
var ledgerVersions = map[string]int{
	TypeLedgerAppend:        1,
	TypeLedgerEntryAdded:    1,
	TypeLedgerChainVerified: 1,
}

// LedgerAppend is the data of a TypeLedgerAppend record: one entry to chain.
// EntryID may be assigned by the emitter ahead of time (charity returns it
// before the entry is appended); the appender uses it when set.
type LedgerAppend struct {
	EntryID     string         `json:"entryId,omitempty"`
	Kind        string         `json:"kind"`
	SourceID    string         `json:"sourceId"`
	ActorUserID string         `json:"actorUserId"`
	AmountCents *int64         `json:"amountCents,omitempty"`
	Currency    string         `json:"currency,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
}
