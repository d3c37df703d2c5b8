package schemas

import (
	"encoding/json"
	"strings"
)

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
	LedgerKindRefund     = "fiat:refund"
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
	// Scope is empty for the platform's modules, whose entries de-duplicate
	// on (Kind, SourceID); entries posted by users carry their user id, so
	// they de-duplicate per actor and never collide with a module's entry.
	Scope string `json:"scope,omitempty"`
}

// moduleNamespaces are the kind prefixes ("<module>:…") that only the
// platform's modules emit.
var moduleNamespaces = map[string]bool{
	"fiat": true, "mask": true, "ledger": true, "reputation": true, "gov": true, "charity": true,
	"trade": true, "rights": true, "chess": true, "cert": true, "sign": true, "ecosystem": true,
	"constitution": true, "planet": true, "build": true, "platform": true, "identity": true,
}

// IsModuleKind reports whether kind belongs to a platform module
// ("fiat:transfer", "Gov:decision", …), which users may not post.
func IsModuleKind(kind string) bool {
	ns, _, ok := strings.Cut(strings.TrimSpace(kind), ":")
	return ok && moduleNamespaces[strings.ToLower(strings.TrimSpace(ns))]
}

// LedgerEntry is one chained entry: the data of TypeLedgerEntryAdded, and
// the API shape of an entry. Timestamp is UTC with six fractional digits,
// exactly as hashed.
type LedgerEntry struct {
	ID          string          `json:"id"`
	Height      int64           `json:"height"`
	Kind        string          `json:"kind"`
	ActorUserID string          `json:"actorUserId"`
	SourceID    string          `json:"sourceId"`
	AmountCents *int64          `json:"amountCents"`
	Currency    *string         `json:"currency"`
	Meta        json.RawMessage `json:"meta"`
	Timestamp   string          `json:"timestamp"`
	PrevHash    string          `json:"prevHash"`
	Hash        string          `json:"hash"`
}

// LedgerChainVerified is the data of TypeLedgerChainVerified, emitted by
// the periodic audit.
type LedgerChainVerified struct {
	Valid      bool   `json:"valid"`
	Height     int64  `json:"height"`
	HeadHash   string `json:"headHash"`
	BrokenAt   *int64 `json:"brokenAt,omitempty"`
	MsToVerify int64  `json:"msToVerify"`
	VerifiedAt string `json:"verifiedAt"`
}

// Field limits of an appended entry.
const (
	LedgerMaxKind     = 64
	LedgerMaxSourceID = 256
	LedgerMaxActor    = 128
	LedgerMaxCurrency = 8
	LedgerMaxMeta     = 64 << 10
)
