package auth

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
)

// Authenticator answers "who is calling" for every bearer-token route, in
// one place: `Authorization: Bearer <token>` holds either a restricted API
// key (RestrictedKeys: limited to the scope the route declares) or a login
// token (the codec's signature and expiry, then its session must be live).
// Its three dependencies are arguments of New, never attached afterwards,
// so no wiring can leave a check out.
type Authenticator struct {
	tokens   *Tokens
	sessions *Sessions
	keys     *Keys
}

// New builds the authenticator over the token codec, the login-session
// check and the restricted API keys; each is required.
func New(tokens *Tokens, sessions *Sessions, keys *Keys) (*Authenticator, error) {
	switch {
	case tokens == nil:
		return nil, errors.New("authenticator: no token codec")
	case sessions == nil:
		return nil, errors.New("authenticator: no session check")
	case keys == nil:
		return nil, errors.New("authenticator: no API keys")
	}
	return &Authenticator{tokens: tokens, sessions: sessions, keys: keys}, nil
}

// Sessions is the login-session check, for handlers that end sessions
// (Ended) or check one outside a request's authentication.
func (a *Authenticator) Sessions() *Sessions { return a.sessions }

// IssueSession signs a token for the user's login session sessionID and
// returns it with its expiry.
func (a *Authenticator) IssueSession(userID, email, sessionID string) (string, time.Time, error) {
	return a.tokens.IssueSession(userID, email, sessionID)
}

// Authenticate checks a login token (not an API key): its signature,
// issuer and expiry, then that its session is live. Anything else answers
// 401 auth_required; a store error is returned as is.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (Principal, error) {
	p, err := a.tokens.Verify(token)
	if err != nil {
		return Principal{}, apierr.AuthRequired()
	}
	if err := a.sessions.Check(ctx, p); err != nil {
		if errors.Is(err, ErrSessionEnded) {
			return Principal{}, apierr.AuthRequired()
		}
		return Principal{}, err
	}
	return p, nil
}

// Caller resolves the request's bearer credential: an API key against the
// scope of the route the request matched, else a login token.
func (a *Authenticator) Caller(c *fiber.Ctx) (Principal, error) {
	tok, ok := BearerToken(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return Principal{}, apierr.AuthRequired()
	}
	if IsAPIKey(tok) {
		return a.keys.authenticate(c, tok)
	}
	return a.Authenticate(c.UserContext(), tok)
}

// Require is middleware that admits only an authenticated caller (Caller)
// and stores it for User.
func (a *Authenticator) Require() fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := a.Caller(c)
		if err != nil {
			return err
		}
		c.Locals(principalKey, p)
		return c.Next()
	}
}

// Optional stores the caller when a valid credential is present and goes
// on without one (or with an invalid one).
func (a *Authenticator) Optional() fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, ok := BearerToken(c.Get(fiber.HeaderAuthorization)); ok {
			if p, err := a.Caller(c); err == nil {
				c.Locals(principalKey, p)
			}
		}
		return c.Next()
	}
}

// CheckKey returns nil while the API key p authenticated with is unrevoked
// and unexpired, ErrKeyEnded once not (or for a caller without a key), or
// the store's error: a request reads the key's row anyway; this is for what
// outlives the request's authentication, an open event stream.
func (a *Authenticator) CheckKey(ctx context.Context, p Principal) error {
	return a.keys.CheckKey(ctx, p)
}
