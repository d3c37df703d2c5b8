package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
)

// KeyKind is one kind of API key: what starts it, how many random bytes it
// carries and how they are written, and which lengths of that text are
// well formed. Every kind is minted, hashed and looked up by the same code
// (Mint, Hash, FindKey): a key carries at least 128 random bits, so its
// stored form is its SHA-256 (nothing to brute-force), and the plaintext is
// never stored nor logged.
type KeyKind struct {
	// Name says what the key is for, in messages.
	Name string
	// Prefix starts every key of the kind (like Stripe's rk_live_).
	Prefix string
	// RandomBytes is the entropy Mint draws.
	RandomBytes int
	// Hex writes the random bytes as lower-case hex; otherwise unpadded
	// base64url.
	Hex bool
	// MinChars and MaxChars bound the text after the prefix that is well
	// formed; zero means exactly the length Mint writes.
	MinChars, MaxChars int
}

// The key kinds. A bearer token that starts with RestrictedKeys.Prefix is a
// key, anything else a login token.
var (
	// RestrictedKeys are a user's keys limited to scopes (schemas.KeyScopes),
	// sent as Authorization: Bearer; stored in api_keys.
	RestrictedKeys = KeyKind{Name: "restricted API key", Prefix: schemas.APIKeyPrefix, RandomBytes: 32}
	// MerchantKeys authenticate a merchant's charges (X-API-Key); stored,
	// as hex, in fiat_merchant_keys.
	MerchantKeys = KeyKind{Name: "merchant key", Prefix: "mk_live_", RandomBytes: 16, Hex: true}
	// PartnerKeys authenticate the partner JSON API (X-Build-Key); stored in
	// build_partner_keys. Keys of 22 to 122 characters are well formed
	// (decisions.md); Mint writes 43.
	PartnerKeys = KeyKind{Name: "partner key", Prefix: "qb_pk_", RandomBytes: 32, MinChars: 22, MaxChars: 122}
)

// KeyKinds is the table of key kinds, for tests and documents.
var KeyKinds = []KeyKind{RestrictedKeys, MerchantKeys, PartnerKeys}

// encodedLen is the length of the text Mint writes after the prefix.
func (k KeyKind) encodedLen() int {
	if k.Hex {
		return hex.EncodedLen(k.RandomBytes)
	}
	return base64.RawURLEncoding.EncodedLen(k.RandomBytes)
}

// Mint draws a fresh key from rnd and returns it with its stored form
// (Hash). The plaintext is for the one answer that shows it.
func (k KeyKind) Mint(rnd io.Reader) (plain string, hash []byte, err error) {
	b := make([]byte, k.RandomBytes)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return "", nil, fmt.Errorf("%s entropy: %w", k.Name, err)
	}
	if k.Hex {
		plain = k.Prefix + hex.EncodeToString(b)
	} else {
		plain = k.Prefix + base64.RawURLEncoding.EncodeToString(b)
	}
	return plain, k.Hash(plain), nil
}

// Hash is the stored form of a key: the SHA-256 of its text.
func (k KeyKind) Hash(plain string) []byte {
	sum := sha256.Sum256([]byte(plain))
	return sum[:]
}

// Is reports whether s starts like a key of the kind.
func (k KeyKind) Is(s string) bool { return strings.HasPrefix(s, k.Prefix) }

// WellFormed reports whether s is a key of the kind in shape (prefix,
// alphabet, length), so a malformed one is refused without a lookup.
func (k KeyKind) WellFormed(s string) bool {
	body, ok := strings.CutPrefix(s, k.Prefix)
	if !ok {
		return false
	}
	lo, hi := k.MinChars, k.MaxChars
	if lo == 0 && hi == 0 {
		lo, hi = k.encodedLen(), k.encodedLen()
	}
	if len(body) < lo || len(body) > hi {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case k.Hex:
			return false
		case c >= 'g' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// ErrKeyUnknown is a key that is malformed, or that no stored row has.
var ErrKeyUnknown = errors.New("auth: unknown API key")

// KeyLookup is how one store finds a key of a kind: by its hash, and the
// stored hash of the row found, which FindKey compares again in constant
// time. ByHash answers postgres.ErrNotFound when no row has the hash.
type KeyLookup[T any] struct {
	Kind   KeyKind
	ByHash func(ctx context.Context, hash []byte) (T, error)
	Stored func(row T) []byte
}

// Find returns the row of a well-formed key, ErrKeyUnknown for a malformed
// or unknown one, or the store's error. The key itself is in no error.
func (l KeyLookup[T]) Find(ctx context.Context, plain string) (T, error) {
	var zero T
	if !l.Kind.WellFormed(plain) {
		return zero, ErrKeyUnknown
	}
	hash := l.Kind.Hash(plain)
	row, err := l.ByHash(ctx, hash)
	if errors.Is(err, postgres.ErrNotFound) {
		return zero, ErrKeyUnknown
	}
	if err != nil {
		return zero, fmt.Errorf("%s: %w", l.Kind.Name, err)
	}
	// The row was found by its hash; comparing again in constant time
	// keeps the check itself free of a data-dependent early exit.
	if subtle.ConstantTimeCompare(l.Stored(row), hash) != 1 {
		return zero, ErrKeyUnknown
	}
	return row, nil
}
