package schemas

import (
	"regexp"
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

// ModuleLedgerKinds lists every entry kind the platform's modules emit, the
// LedgerKind* constants of every module's contract. Each is re-anchored by
// exactly one `platform ledger reanchor` source (a test in cmd/platform) and
// refused from users by IsModuleKind; TestModuleLedgerKindsComplete fails
// when a LedgerKind constant is declared but not listed here.
func ModuleLedgerKinds() []string {
	return []string{
		LedgerKindTransfer, LedgerKindDeposit, LedgerKindWithdrawal, LedgerKindRefund,
		LedgerKindMerchantCharge, LedgerKindRequestPayment,
		LedgerKindMaskCharge, LedgerKindDonation, LedgerKindGovernance,
		LedgerKindTradeTopUp, LedgerKindTradeTransfer,
	}
}

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

// ledgerCurrency is a currency code as entries carry it: KZT, USD, TNU.
var ledgerCurrency = regexp.MustCompile(`^[A-Z]{3,8}$`)

// Validate is the one rule for an entry to chain, applied by the gateway
// before it sends a user's entry and by the appender to every command (a
// module's too). The meta object's size is checked where it is encoded
// canonically (storage/ledger), on both sides.
func (a LedgerAppend) Validate() error {
	p := FieldProblems{}
	if p.Required("kind", a.Kind) {
		p.MaxLen("kind", a.Kind, LedgerMaxKind)
	}
	if p.Required("sourceId", a.SourceID) {
		p.MaxLen("sourceId", a.SourceID, LedgerMaxSourceID)
	}
	p.MaxLen("actorUserId", a.ActorUserID, LedgerMaxActor)
	p.MaxLen("entryId", a.EntryID, LedgerMaxActor)
	if a.Currency != "" {
		p.Check(ledgerCurrency.MatchString(a.Currency), "currency", "must be an upper-case currency code such as KZT or USD")
	}
	for _, f := range [...]struct{ field, v string }{{"kind", a.Kind}, {"sourceId", a.SourceID},
		{"actorUserId", a.ActorUserID}, {"currency", a.Currency}, {"entryId", a.EntryID}} {
		p.Check(!strings.ContainsRune(f.v, 0), f.field, "must not contain NUL characters")
	}
	return p.Err()
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
	ID          string    `json:"id" required:"true" format:"ksuid"`
	Height      int64     `json:"height" required:"true" minimum:"1" description:"position in the chain, from 1"`
	Kind        string    `json:"kind" required:"true"`
	ActorUserID string    `json:"actorUserId" required:"true"`
	SourceID    string    `json:"sourceId" required:"true"`
	AmountCents *int64    `json:"amountCents" required:"true" description:"integer minor units"`
	Currency    *string   `json:"currency" required:"true"`
	Meta        RawObject `json:"meta" required:"true" description:"a JSON object, or null"`
	Timestamp   string    `json:"timestamp" required:"true" format:"date-time" description:"UTC with six fractional digits, exactly as hashed"`
	PrevHash    string    `json:"prevHash" required:"true"`
	Hash        string    `json:"hash" required:"true"`
}

// LedgerChainContext is the neighbourhood of an entry in the chain.
type LedgerChainContext struct {
	PreviousID   *string `json:"previousId" required:"true" format:"ksuid"`
	PreviousHash string  `json:"previousHash" required:"true" description:"the genesis hash before the first entry"`
	NextID       *string `json:"nextId" required:"true" format:"ksuid"`
	NextHash     *string `json:"nextHash" required:"true"`
	// Linked is true when the neighbours' stored hashes link to this entry.
	Linked bool `json:"linked" required:"true" description:"the neighbours' stored hashes link to this entry"`
}

// LedgerEntryInChain is one entry with its chain context
// (GET /api/ledger/entries/:id).
type LedgerEntryInChain struct {
	LedgerEntry
	Chain LedgerChainContext `json:"chain" required:"true"`
}

// LedgerHead is the chain head (GET /api/ledger/chain/head); id and
// timestamp are null while the chain is empty.
type LedgerHead struct {
	ID        *string `json:"id" required:"true" format:"ksuid"`
	Hash      string  `json:"hash" required:"true"`
	Height    int64   `json:"height" required:"true" minimum:"0"`
	Timestamp *string `json:"timestamp" required:"true" format:"date-time"`
}

// LedgerVerifyResult is the result of walking the chain
// (GET /api/ledger/chain/verify); the broken-link fields are set only when
// Valid is false.
type LedgerVerifyResult struct {
	Valid            bool    `json:"valid" required:"true"`
	Verified         bool    `json:"verified" required:"true"`
	Height           int64   `json:"height" required:"true"`
	HeadHash         string  `json:"headHash" required:"true"`
	VerifiedAt       string  `json:"verifiedAt" required:"true" format:"date-time"`
	MsToVerify       int64   `json:"msToVerify" required:"true"`
	BrokenAt         *int64  `json:"brokenAt,omitempty" description:"height of the first broken link"`
	ExpectedPrevHash *string `json:"expectedPrevHash,omitempty"`
	FoundPrevHash    *string `json:"foundPrevHash,omitempty"`
	Reason           string  `json:"reason,omitempty" enum:"prev_hash_mismatch,hash_mismatch,height_gap"`
	ExpectedHash     string  `json:"expectedHash,omitempty"`
	FoundHash        string  `json:"foundHash,omitempty"`
	// VerifiedFrom is the height of the last verified head this walk
	// started after (0: the whole chain); FullWalkAt is when the last walk
	// of the whole chain (in the background, LEDGER_AUDIT_INTERVAL) ran.
	VerifiedFrom int64  `json:"verifiedFrom" description:"the walk checked the entries above this height, verified before (0: the whole chain)"`
	FullWalkAt   string `json:"fullWalkAt,omitempty" format:"date-time" description:"when the last walk of the whole chain ran"`
}

// LedgerWindows are entry counts of the last 24 hours, 7 days and 30 days.
type LedgerWindows struct {
	Last24h int64 `json:"24h" required:"true"`
	Last7d  int64 `json:"7d" required:"true"`
	Last30d int64 `json:"30d" required:"true"`
}

// LedgerStats are the rolling entry counts, in total and by kind, from the
// analytics copy (GET /api/ledger/stats).
type LedgerStats struct {
	Totals LedgerWindows            `json:"totals" required:"true"`
	ByKind map[string]LedgerWindows `json:"byKind" required:"true"`
	AsOf   string                   `json:"asOf" required:"true" format:"date-time"`
	Source string                   `json:"source" required:"true" enum:"clickhouse"`
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
