package schemas

import (
	"encoding/json"
	"time"
)

// Signing (module sign) answers. The module writes Postgres directly from
// the gateway and has no commands: a signature is made and recorded in the
// request that asks for it.

// SignResult is the answer to POST /api/sign/sign (spec: Signing): the
// canonical payload that was signed, byte for byte, and the signature
// `<keyId>.<base64url sig>`.
type SignResult struct {
	Payload   json.RawMessage `json:"payload" required:"true" description:"the RFC 8785 canonical form of the payload object, as signed"`
	Signature string          `json:"signature" required:"true" pattern:"^[0-9A-Za-z]+\\.[A-Za-z0-9_-]{86}$" description:"<keyId>.<base64url Ed25519 signature, unpadded>"`
	Algo      string          `json:"algo" required:"true" enum:"Ed25519"`
	KeyID     string          `json:"keyId" required:"true" format:"ksuid"`
	CreatedAt time.Time       `json:"createdAt" required:"true"`
}

// VerifyResult is the answer to POST /api/sign/verify (decisions.md,
// Signing): Expected is the hex SHA-256 of the canonical payload sent now,
// Provided that of the payload recorded when the signature was made (null
// when the signature was not made here); KeyID is the key the signature
// names (null when it is malformed). It holds digests only, never a
// signature.
type VerifyResult struct {
	Valid    bool    `json:"valid" required:"true"`
	Expected string  `json:"expected" required:"true" pattern:"^[0-9a-f]{64}$" description:"hex SHA-256 of the canonical payload sent"`
	Provided *string `json:"provided" required:"true" pattern:"^[0-9a-f]{64}$" description:"hex SHA-256 of the payload recorded with the signature; null when it was not made here"`
	KeyID    *string `json:"keyId" required:"true" description:"the key the signature names; null when the signature is malformed"`
}

// JWK is an RFC 8037 public key: kty OKP, crv Ed25519, x the base64url
// (unpadded) public key.
type JWK struct {
	Kty string `json:"kty" required:"true" enum:"OKP"`
	Crv string `json:"crv" required:"true" enum:"Ed25519"`
	X   string `json:"x" required:"true" description:"base64url public key, unpadded"`
	Kid string `json:"kid" format:"ksuid"`
	Alg string `json:"alg" enum:"EdDSA"`
	Use string `json:"use" enum:"sig"`
}

// Signing key statuses: a rotated key is retired but stays published.
const (
	SigningKeyActive  = "active"
	SigningKeyRetired = "retired"
)

// SigningKey is the published form of a signing key.
type SigningKey struct {
	KeyID     string     `json:"keyId" required:"true" format:"ksuid"`
	Algo      string     `json:"algo" required:"true" enum:"Ed25519"`
	PublicKey string     `json:"publicKey" required:"true" description:"base64url public key, unpadded"`
	Status    string     `json:"status" required:"true" enum:"active,retired"`
	CreatedAt time.Time  `json:"createdAt" required:"true"`
	RetiredAt *time.Time `json:"retiredAt" required:"true" description:"null while the key is active"`
	JWK       JWK        `json:"jwk" required:"true"`
}

// RotatedSigningKey is the answer to POST /api/sign/keys/rotate: the new
// active key and the id of the key it retired (null on a first key).
type RotatedSigningKey struct {
	SigningKey
	PreviousKeyID *string `json:"previousKeyId" required:"true" format:"ksuid"`
}

// SigningKeys is the caller's keys, newest first: the whole list in one
// page (nextCursor is always null).
type SigningKeys struct {
	Items      []SigningKey `json:"items" required:"true" nullable:"false"`
	Total      int          `json:"total" required:"true"`
	NextCursor *string      `json:"nextCursor" required:"true" description:"always null: every key is in items"`
}
