// Package sign serves Ed25519 signing under /api/sign. Each user gets an
// Ed25519 key on first use; its private part is stored only sealed by the
// Keyring (AEAD under SIGNING_MASTER_KEY). POST /sign signs the RFC 8785
// canonical form of a JSON object and records the signing; GET /keys/:keyId
// publishes public keys (also as RFC 8037 JWK) for offline verification;
// POST /verify (no auth) checks a payload against a signature and answers
// digests only, never a signature, so it is no signing oracle. Rotating a
// key retires it but keeps it published: old signatures stay verifiable.
package sign

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/sealed"
	store "github.com/fintech/platform/storage/sign"
)

// Prefix is the path prefix of the module.
const Prefix = "/api/sign"

// Algo is the only signature algorithm.
const Algo = "Ed25519"

// Store is what the handlers need from storage.
type Store interface {
	ActiveKey(ctx context.Context, userID string) (store.KeyRow, error)
	Key(ctx context.Context, id string) (store.KeyRow, error)
	Keys(ctx context.Context, userID string) ([]store.KeyRow, error)
	CreateFirstKey(ctx context.Context, k store.KeyRow) (store.KeyRow, error)
	Rotate(ctx context.Context, k store.KeyRow) (string, error)
	Reseal(ctx context.Context, id string, sealed, nonce []byte, masterKeyID string) error
	RecordSignature(ctx context.Context, r store.SignatureRow) error
	RecordSignatureWithin(ctx context.Context, r store.SignatureRow, since time.Time, maxBytes, maxCount int64) (time.Time, error)
	SignatureDigest(ctx context.Context, signature string) (string, error)
}

var _ Store = (*store.Store)(nil)

// Handlers serve /api/sign.
type Handlers struct {
	store   Store
	ring    *sealed.Keyring
	db      platform.Pinger
	require fiber.Handler
	now     func() time.Time
	newID   func() string
	routes  func() []server.Route
}

// NewHandlers builds the handlers. require authenticates the caller (the
// JWT middleware); newID draws key and record ids; routes lists the
// server's routes for /openapi.json.
func NewHandlers(st Store, ring *sealed.Keyring, db platform.Pinger, require fiber.Handler, now func() time.Time,
	newID func() string, routes func() []server.Route) (*Handlers, error) {
	if st == nil || ring == nil || db == nil || require == nil || now == nil || newID == nil || routes == nil {
		return nil, errors.New("sign handlers: nil dependency")
	}
	return &Handlers{store: st, ring: ring, db: db, require: require, now: now, newID: newID, routes: routes}, nil
}

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("sign")
	platform.Basics(g, "signing", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title: "Signing",
		Description: "Ed25519 signatures over the RFC 8785 canonical JSON of a payload object. " +
			"Public keys are published as RFC 8037 JWKs for offline verification.",
		Prefixes: []string{Prefix},
	}))
	server.Post(g, "/sign", server.Op[signRequest]{
		Summary:     "Sign the canonical JSON (RFC 8785) of a payload object with the caller's Ed25519 key",
		Description: "Signs the RFC 8785 canonical form of the payload with the caller's active key (one is created on first use) and records the signing.",

		Class: ratelimit.Write, Handle: h.sign,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the signature", schemas.SignResult{}),
			server.Fails(http.StatusUnprocessableEntity, "validation_failed: payload is missing or not a JSON object that can be canonicalized"),
		},
	}, h.require)
	server.Post(g, "/verify", server.Op[verifyRequest]{
		Summary:     "Verify a payload against a signature (digests only, never a signature)",
		Description: "Checks a payload against a signature and a published key; answers digests only, never a signature. Changes nothing.",

		Class: ratelimit.Write, Public: true, Handle: h.verify,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the verdict and digests; a malformed, unknown or tampered signature is valid: false", schemas.VerifyResult{}),
			server.Fails(http.StatusUnprocessableEntity, "validation_failed: payload or signature is missing or malformed"),
		},
	})
	server.Get(g, "/keys", server.Op[server.NoRequest]{
		Summary:     "The caller's signing keys, active and retired",
		Description: "Lists the caller's signing keys, active and retired, with their public halves. Read-only.",
		Handle:      h.listKeys,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's keys, newest first", schemas.SigningKeys{})},
	}, h.require)
	server.Post(g, "/keys/rotate", server.Op[server.NoRequest]{
		Summary:     "Retire the caller's key and issue a new one; old keys stay published",
		Description: "Retires the caller's active key and creates a new one; retired keys stay published so old signatures still verify.",

		Class: ratelimit.Write, Handle: h.rotate,
		Responses: []server.Response{server.Answers(http.StatusCreated, "the new active key", schemas.RotatedSigningKey{})},
	}, h.require)
	server.Get(g, "/keys/:keyId", server.Op[keyPath]{
		Summary:     "A public key, also as an RFC 8037 JWK",
		Description: "One published public key, also as an RFC 8037 JWK, for offline verification. Read-only.",
		Public:      true, Handle: h.getKey,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the public key, active or retired", schemas.SigningKey{}),
			server.Fails(http.StatusNotFound, "not_found: no such signing key"),
		},
	})
}

// caller returns the authenticated user id (require ran before).
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}

var errKeyNotFound = apierr.NotFound("no such signing key")

// keyIDPattern matches key ids (ksuids); anything else names no key.
var keyIDPattern = regexp.MustCompile(`^[0-9A-Za-z]{1,64}$`)

// FormatSignature encodes a signature as `<keyId>.<base64url sig>` (64
// bytes, unpadded: 86 characters after the dot).
func FormatSignature(keyID string, sig []byte) string {
	return keyID + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// ParseSignature splits a signature string; ok is false when it is not a
// key id and a 64-byte unpadded base64url signature.
func ParseSignature(s string) (keyID string, sig []byte, ok bool) {
	keyID, enc, found := strings.Cut(s, ".")
	if !found || !keyIDPattern.MatchString(keyID) || len(enc) != 86 {
		return "", nil, false
	}
	sig, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return "", nil, false
	}
	return keyID, sig, true
}

// aad binds a sealed seed to its key id and owner.
func aad(keyID, userID string) []byte {
	return []byte("platform/sign/v1\x00" + keyID + "\x00" + userID)
}

// newKey draws an Ed25519 key for userID and seals its seed.
func (h *Handlers) newKey(userID string, now time.Time) (store.KeyRow, error) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return store.KeyRow{}, err
	}
	seed := priv.Seed()
	defer clear(seed)
	id := h.newID()
	sealed, nonce, master, err := h.ring.Seal(seed, aad(id, userID))
	if err != nil {
		return store.KeyRow{}, err
	}
	return store.KeyRow{ID: id, UserID: userID, PublicKey: pub, SealedSeed: sealed, Nonce: nonce,
		MasterKeyID: master, Status: store.StatusActive, CreatedAt: now}, nil
}

// activeKey returns the user's active key, creating it on first use.
func (h *Handlers) activeKey(ctx context.Context, userID string, now time.Time) (store.KeyRow, error) {
	k, err := h.store.ActiveKey(ctx, userID)
	if !store.IsNotFound(err) {
		return k, err
	}
	nk, err := h.newKey(userID, now)
	if err != nil {
		return store.KeyRow{}, err
	}
	return h.store.CreateFirstKey(ctx, nk)
}

// privateKey opens a key's sealed seed. A seed sealed under a master key
// that is no longer current is sealed again under the current one.
func (h *Handlers) privateKey(ctx context.Context, k store.KeyRow) (ed25519.PrivateKey, error) {
	seed, err := h.ring.Open(k.MasterKeyID, k.SealedSeed, k.Nonce, aad(k.ID, k.UserID))
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	if len(seed) != ed25519.SeedSize {
		return nil, errors.New("open signing key: bad seed size")
	}
	if k.MasterKeyID != h.ring.CurrentID() {
		if sealed, nonce, master, err := h.ring.Seal(seed, aad(k.ID, k.UserID)); err == nil {
			// Best effort: the old master key still opens it until then.
			_ = h.store.Reseal(ctx, k.ID, sealed, nonce, master)
		}
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
