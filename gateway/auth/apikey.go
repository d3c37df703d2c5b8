package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
)

// KeyStore is what key authentication reads and writes.
type KeyStore interface {
	ByHash(ctx context.Context, hash []byte) (identity.APIKey, error)
	Touch(ctx context.Context, id string, now, notBefore time.Time) error
	Live(ctx context.Context, id string, now time.Time) (bool, error)
}

var _ KeyStore = (*identity.APIKeys)(nil)

// touchEvery is how stale a key's recorded last use may grow before a use
// writes it again: a busy key costs one write a minute, not one a request.
const touchEvery = time.Minute

// Keys authenticates restricted API keys (RestrictedKeys) sent as
// `Authorization: Bearer <key>`. A key acts as its user limited to its
// scopes: the route's required scope comes from scopeOf (server.KeyScope,
// declared with the route: its router's key area or its own Op.KeyScope).
// Every request reads the key's row, so a revocation holds at once on
// every gateway.
type Keys struct {
	store   KeyStore
	lookup  KeyLookup[identity.APIKey]
	scopeOf func(c *fiber.Ctx) string
	now     func() time.Time
	log     *slog.Logger
}

// NewKeys builds the key authenticator.
func NewKeys(store KeyStore, scopeOf func(c *fiber.Ctx) string, now func() time.Time, log *slog.Logger) (*Keys, error) {
	if store == nil || scopeOf == nil || now == nil || log == nil {
		return nil, errors.New("api keys: nil dependency")
	}
	lookup := KeyLookup[identity.APIKey]{Kind: RestrictedKeys, ByHash: store.ByHash,
		Stored: func(row identity.APIKey) []byte { return row.Hash }}
	return &Keys{store: store, lookup: lookup, scopeOf: scopeOf, now: now, log: log}, nil
}

// IsAPIKey reports whether a bearer token is a restricted API key rather
// than a JWT.
func IsAPIKey(tok string) bool { return RestrictedKeys.Is(tok) }

// HasScope reports whether scopes grant need; a write scope grants the
// read of its area too.
func HasScope(scopes []string, need string) bool {
	if slices.Contains(scopes, need) {
		return true
	}
	area, level, _ := strings.Cut(need, ":")
	return level == schemas.ScopeRead && slices.Contains(scopes, area+":"+schemas.ScopeWrite)
}

// errKeyInvalid answers an unknown, revoked or expired key.
func errKeyInvalid() *apierr.Error {
	return apierr.New(http.StatusUnauthorized, apierr.CodeKeyInvalid, "this API key is unknown, revoked or expired")
}

// authenticate resolves the key of the request and checks that its scopes
// reach the route.
func (k *Keys) authenticate(c *fiber.Ctx, key string) (Principal, error) {
	ctx := c.UserContext()
	row, err := k.lookup.Find(ctx, key)
	if errors.Is(err, ErrKeyUnknown) {
		return Principal{}, errKeyInvalid()
	}
	if err != nil {
		return Principal{}, err
	}
	now := k.now()
	if row.ExpiresAt != nil && !now.Before(*row.ExpiresAt) {
		return Principal{}, errKeyInvalid()
	}
	need := k.scopeOf(c)
	if need == "" {
		return Principal{}, apierr.New(http.StatusForbidden, apierr.CodeForbidden,
			"API keys cannot call this route: admin routes, password, MFA, sessions and key management need a login token")
	}
	if !HasScope(row.Scopes, need) {
		return Principal{}, apierr.New(http.StatusForbidden, schemas.CodeInsufficientScope,
			"this API key lacks the scope "+need+" this route needs").With(map[string]any{"scope": need})
	}
	if notBefore := now.Add(-touchEvery); row.LastUsedAt == nil || row.LastUsedAt.Before(notBefore) {
		if err := k.store.Touch(ctx, row.ID, now, notBefore); err != nil {
			// The last-use time is informative: a failed write never fails
			// the request it describes.
			k.log.WarnContext(ctx, "recording an api key's last use", "keyId", row.ID, "err", err)
		}
	}
	return Principal{UserID: row.UserID, Email: row.Email, KeyID: row.ID}, nil
}

// ErrKeyEnded is an API key revoked or expired since the caller
// authenticated with it.
var ErrKeyEnded = errors.New("auth: the API key was revoked or has expired")

// CheckKey returns nil while the key p authenticated with is unrevoked and
// unexpired, ErrKeyEnded once not, or the store's error.
func (k *Keys) CheckKey(ctx context.Context, p Principal) error {
	if p.KeyID == "" {
		return ErrKeyEnded
	}
	live, err := k.store.Live(ctx, p.KeyID, k.now())
	if err != nil {
		return err
	}
	if !live {
		return ErrKeyEnded
	}
	return nil
}
