package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fintech/platform/schemas"
)

// GenesisPrevHash is the prevHash of the first entry: 64 zeros.
var GenesisPrevHash = strings.Repeat("0", 64)

// TimestampLayout is how an entry's timestamp is written, both in the hashed
// document and in the API: UTC with exactly six fractional digits, the
// precision Postgres keeps, so a stored entry hashes as it did when appended.
const TimestampLayout = "2006-01-02T15:04:05.000000Z"

// Entry is one link of the chain.
type Entry struct {
	ID          string
	Height      int64
	Kind        string
	ActorUserID string
	SourceID    string
	AmountCents *int64
	// Currency is "" when the entry has none (null in the hashed document).
	Currency string
	// Meta is the canonical JSON of the meta object, nil when there is none.
	Meta      []byte
	Timestamp time.Time
	PrevHash  string
	Hash      string
	// Scope is what the entry de-duplicates within: "" for module
	// emissions, the actor for user entries. It is not hashed.
	Scope string
}

// JSON returns the API shape of e.
func (e Entry) JSON() schemas.LedgerEntry {
	out := schemas.LedgerEntry{ID: e.ID, Height: e.Height, Kind: e.Kind, ActorUserID: e.ActorUserID,
		SourceID: e.SourceID, AmountCents: e.AmountCents, Timestamp: FormatTimestamp(e.Timestamp),
		PrevHash: e.PrevHash, Hash: e.Hash}
	if e.Currency != "" {
		c := e.Currency
		out.Currency = &c
	}
	if e.Meta != nil {
		out.Meta = schemas.RawObject(e.Meta)
	}
	return out
}

// FormatTimestamp writes t in TimestampLayout.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// HashDocument returns the canonical JSON the hash covers (without the
// salt): { actorUserId, amountCents, currency, height, kind, meta, prevHash,
// sourceId, timestamp } with sorted keys.
func (e Entry) HashDocument() []byte {
	return appendEntryDoc(nil, e.raw())
}

// ComputeHash returns hex SHA-256 over salt ‖ HashDocument.
func (e Entry) ComputeHash(salt string) string {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write(e.HashDocument())
	return hex.EncodeToString(h.Sum(nil))
}

func (e Entry) raw() rawEntry {
	r := rawEntry{height: e.Height, kind: []byte(e.Kind), actor: []byte(e.ActorUserID),
		source: []byte(e.SourceID), prevHash: []byte(e.PrevHash),
		tsMicros: e.Timestamp.UnixMicro()}
	if e.AmountCents != nil {
		r.hasAmount, r.amount = true, *e.AmountCents
	}
	if e.Currency != "" {
		r.hasCurrency, r.currency = true, []byte(e.Currency)
	}
	if e.Meta != nil {
		r.hasMeta, r.meta = true, e.Meta
	}
	return r
}

// rawEntry is an entry as byte slices, the shape verification reads from
// the wire without allocating.
type rawEntry struct {
	height      int64
	kind        []byte
	actor       []byte
	source      []byte
	prevHash    []byte
	currency    []byte
	meta        []byte
	amount      int64
	tsMicros    int64
	hasAmount   bool
	hasCurrency bool
	hasMeta     bool
}

// appendEntryDoc is the hand-rolled canonical encoder of the fixed entry
// shape; entry_test.go checks it against Canonical for the same values.
func appendEntryDoc(b []byte, r rawEntry) []byte {
	b = append(b, `{"actorUserId":`...)
	b = appendStringBytes(b, r.actor)
	b = append(b, `,"amountCents":`...)
	if r.hasAmount {
		b = strconv.AppendInt(b, r.amount, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"currency":`...)
	if r.hasCurrency {
		b = appendStringBytes(b, r.currency)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"height":`...)
	b = strconv.AppendInt(b, r.height, 10)
	b = append(b, `,"kind":`...)
	b = appendStringBytes(b, r.kind)
	b = append(b, `,"meta":`...)
	if r.hasMeta {
		b = append(b, r.meta...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"prevHash":`...)
	b = appendStringBytes(b, r.prevHash)
	b = append(b, `,"sourceId":`...)
	b = appendStringBytes(b, r.source)
	b = append(b, `,"timestamp":"`...)
	b = time.UnixMicro(r.tsMicros).UTC().AppendFormat(b, TimestampLayout)
	return append(b, `"}`...)
}

// appendStringBytes is AppendString for a byte slice, without converting
// when no escaping is needed (the common case).
func appendStringBytes(b, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return AppendString(b, string(s))
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// hasher computes entry hashes with reusable buffers; not safe for
// concurrent use.
type hasher struct {
	salt []byte
	buf  []byte
	sum  [32]byte
	hex  [64]byte
}

func newHasher(salt string) *hasher {
	return &hasher{salt: []byte(salt), buf: make([]byte, 0, 1024)}
}

// hexHash returns the hex hash of r; the slice is valid until the next call.
func (h *hasher) hexHash(r rawEntry) []byte {
	h.buf = append(h.buf[:0], h.salt...)
	h.buf = appendEntryDoc(h.buf, r)
	h.sum = sha256.Sum256(h.buf)
	hex.Encode(h.hex[:], h.sum[:])
	return h.hex[:]
}
