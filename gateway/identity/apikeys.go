package identity

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// KeyStore is what the API key routes need from the key repository.
type KeyStore interface {
	Create(ctx context.Context, k identity.APIKey, max int) error
	Active(ctx context.Context, userID string, now time.Time) ([]identity.APIKey, error)
	Revoke(ctx context.Context, userID, id string, now time.Time) error
}

var _ KeyStore = (*identity.APIKeys)(nil)

// Reauther checks a sensitive write's fresh password (and code) and mails
// its owner a notice (Handlers).
type Reauther interface {
	Reauthenticate(c *fiber.Ctx, userID, password, code string) error
	Notify(ctx context.Context, userID, what string)
}

var _ Reauther = (*Handlers)(nil)

// keyShownChars is how much of a restricted API key (auth.RestrictedKeys)
// the list shows.
const keyShownChars = len(schemas.APIKeyPrefix) + 6

// KeyHandlers serve /api/auth/api-keys. They sit apart from Handlers so
// that key management stays one file; the routes are closed to API keys
// themselves (their router's key area is server.NoKeys).
type KeyHandlers struct {
	keys    KeyStore
	authn   *auth.Authenticator
	reauth  Reauther
	now     func() time.Time
	entropy io.Reader
}

// NewKeyHandlers builds the key routes.
func NewKeyHandlers(keys KeyStore, authn *auth.Authenticator, reauth Reauther, now func() time.Time) (*KeyHandlers, error) {
	if keys == nil || authn == nil || reauth == nil || now == nil {
		return nil, errors.New("api key handlers: nil dependency")
	}
	return &KeyHandlers{keys: keys, authn: authn, reauth: reauth, now: now, entropy: rand.Reader}, nil
}

// Register mounts the key routes under /api/auth.
func (h *KeyHandlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea(server.NoKeys) // keys never manage keys
	require := h.authn.Require()
	server.Post(g, "/api-keys", server.Op[createKeyRequest]{
		Summary: "Create a restricted API key for a backend",
		Description: "Creates a key that acts as the caller limited to its scopes (" + strings.Join(schemas.KeyScopes(), ", ") +
			"; a write scope grants the read of its area), sent as `Authorization: Bearer <key>`. The key is answered once; only its SHA-256 is kept. " +
			"Keys never reach admin routes, password, MFA, sessions or key management. Needs a login token and the caller's `password` " +
			"(and `code` when two-factor is on); the owner is mailed a notice. A password change, a reset and signing out everywhere revoke every key.",
		Class: ratelimit.Auth, Handle: h.create,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the key, shown only in this answer", schemas.APIKeyCreated{}),
			server.Fails(http.StatusForbidden, "invalid_credentials or mfa_required: the password or code is wrong, or two-factor is on and no code was sent"),
			server.Fails(http.StatusTooManyRequests, "key_limit_reached: the caller holds the most active API keys allowed"),
		},
	}, require)
	server.Get(g, "/api-keys", server.Op[server.NoRequest]{
		Summary:     "The caller's active API keys",
		Description: "Lists the caller's unrevoked, unexpired keys, newest first, with prefix, scopes and last use (to the minute); never a key. Read-only.",
		Handle:      h.list,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's active keys, newest first", schemas.APIKeyList{})},
	}, require)
	server.Handle(g, http.MethodDelete, "/api-keys/:id", server.Op[keyPath]{
		Summary:     "Revoke an API key at once",
		Description: "Revokes one of the caller's keys: its next request, on any gateway, answers 401 key_invalid. Another user's key is 404.",
		Class:       ratelimit.Write, Handle: h.revoke,
		Responses: []server.Response{
			{Status: http.StatusNoContent, Description: "revoked"},
			server.Fails(http.StatusNotFound, "not_found: no such active API key of the caller"),
		},
	}, require)
}

// createKeyRequest is POST /api/auth/api-keys.
type createKeyRequest struct {
	Name      string   `json:"name" required:"true" maxLength:"100" description:"what the key is for, shown in the list"`
	Scopes    []string `json:"scopes" required:"true" minItems:"1" maxItems:"64" description:"the scopes the key carries, e.g. fiat:read, fiat:write, webhooks:write"`
	ExpiresAt string   `json:"expiresAt" format:"date-time" description:"when the key stops working; left out, it works until revoked"`
	Password  string   `json:"password" required:"true" minLength:"1" maxLength:"128" description:"the caller's current password: a stolen token alone cannot mint a key"`
	Code      string   `json:"code,omitempty" maxLength:"32" description:"when two-factor is on: a current TOTP code or an unused recovery code"`
}

// Validate checks the scopes against the table and the expiry.
func (req *createKeyRequest) Validate() error {
	var v bind.Validator
	v.Check(strings.TrimSpace(req.Name) != "", "name", "must not be blank")
	for _, s := range req.Scopes {
		if !schemas.IsKeyScope(s) {
			v.Fail("scopes", fmt.Sprintf("unknown scope %q; the scopes are %s", s, strings.Join(schemas.KeyScopes(), ", ")))
			break
		}
	}
	return v.Err()
}

type keyPath struct {
	ID string `path:"id" format:"ksuid"`
}

func (h *KeyHandlers) create(c *fiber.Ctx, req *createKeyRequest) error {
	p, _ := auth.User(c)
	now := h.now().UTC()
	var expires *time.Time
	if req.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, req.ExpiresAt)
		if err != nil || !t.After(now) {
			return apierr.Validation(map[string]string{"expiresAt": "must be an RFC 3339 date-time in the future"})
		}
		t = t.UTC()
		expires = &t
	}
	if err := h.reauth.Reauthenticate(c, p.UserID, req.Password, req.Code); err != nil {
		return err
	}
	plain, hash, err := auth.RestrictedKeys.Mint(h.entropy)
	if err != nil {
		return err
	}
	scopes := slices.Clone(req.Scopes)
	slices.Sort(scopes)
	k := identity.APIKey{ID: schemas.NewID(), UserID: p.UserID, Name: strings.TrimSpace(req.Name),
		Prefix: plain[:keyShownChars], Hash: hash, Scopes: slices.Compact(scopes),
		CreatedAt: now, ExpiresAt: expires}
	if err := h.keys.Create(c.UserContext(), k, schemas.MaxAPIKeys); err != nil {
		if errors.Is(err, identity.ErrKeyLimit) {
			return apierr.New(http.StatusTooManyRequests, schemas.CodeKeyLimitReached,
				fmt.Sprintf("you hold %d active API keys; revoke one first", schemas.MaxAPIKeys))
		}
		return err
	}
	h.reauth.Notify(c.UserContext(), p.UserID, fmt.Sprintf("an API key %q (%s) was created for your account", k.Name, k.Prefix))
	return c.Status(http.StatusCreated).JSON(schemas.APIKeyCreated{APIKey: keyView(k), Key: plain})
}

func (h *KeyHandlers) list(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	keys, err := h.keys.Active(c.UserContext(), p.UserID, h.now())
	if err != nil {
		return err
	}
	out := schemas.APIKeyList{Items: make([]schemas.APIKey, 0, len(keys))}
	for _, k := range keys {
		out.Items = append(out.Items, keyView(k))
	}
	return c.JSON(out)
}

func (h *KeyHandlers) revoke(c *fiber.Ctx, req *keyPath) error {
	p, _ := auth.User(c)
	err := h.keys.Revoke(c.UserContext(), p.UserID, req.ID, h.now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no such active API key of yours")
	}
	if err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

func keyView(k identity.APIKey) schemas.APIKey {
	v := schemas.APIKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes,
		CreatedAt: k.CreatedAt.UTC().Format(time.RFC3339)}
	if k.LastUsedAt != nil {
		s := k.LastUsedAt.UTC().Format(time.RFC3339)
		v.LastUsedAt = &s
	}
	if k.ExpiresAt != nil {
		s := k.ExpiresAt.UTC().Format(time.RFC3339)
		v.ExpiresAt = &s
	}
	return v
}
