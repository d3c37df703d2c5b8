// Package auth issues and checks the platform's HS256 bearer tokens and
// resolves roles from the admin allowlists.
package auth

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
)

const issuer = "platform"

// Principal is the authenticated caller.
type Principal struct {
	UserID string
	Email  string
	// SessionID is the login session the token belongs to (claim sid).
	SessionID string
	// KeyID is the restricted API key the caller authenticated with ("" for
	// a login token); such a caller is limited to the key's scopes.
	KeyID string
}

// Tokens is the token codec: it signs and verifies JWTs with one HS256
// secret. Requests are authenticated by an Authenticator, which adds the
// session check and API keys.
type Tokens struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
	parser *jwt.Parser

	// verified caches tokens that passed Verify, so a client's next
	// requests skip the HMAC and the claims' JSON (a tenth of a request's
	// CPU in the gateway). Tokens are stateless — nothing revokes one
	// before its expiry — so an entry is good until the token's own expiry,
	// checked on every hit, and at most verifyCacheTTL after it was checked.
	mu       sync.RWMutex
	verified map[[sha256.Size]byte]verifiedToken
}

type verifiedToken struct {
	p       Principal
	expires time.Time // the token's exp, or verifyCacheTTL after the check if sooner
}

// verifyCacheTTL bounds how long a verified token is answered from the
// cache; verifyCacheMax bounds the entries (the cache is emptied when full).
const (
	verifyCacheTTL = time.Minute
	verifyCacheMax = 50_000
)

// NewTokens builds the signer. The secret must be at least 32 bytes.
func NewTokens(secret []byte, ttl time.Duration, now func() time.Time) (*Tokens, error) {
	if len(secret) < 32 {
		return nil, errors.New("JWT_SECRET must be at least 32 bytes")
	}
	if ttl <= 0 {
		return nil, errors.New("JWT_TTL must be positive")
	}
	return &Tokens{secret: secret, ttl: ttl, now: now, verified: map[[sha256.Size]byte]verifiedToken{}, parser: jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuer(issuer),
		jwt.WithTimeFunc(now),
	)}, nil
}

type claims struct {
	Email     string `json:"email"`
	SessionID string `json:"sid,omitempty"`
	jwt.RegisteredClaims
}

// Issue signs a token for the user that expires after the TTL, without a
// session: an Authenticator admits no such token; logins use IssueSession.
func (t *Tokens) Issue(userID, email string) (string, error) {
	tok, _, err := t.issue(userID, email, "")
	return tok, err
}

func (t *Tokens) issue(userID, email, sessionID string) (string, time.Time, error) {
	now := t.now()
	exp := now.Add(t.ttl)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{
		Email:     email,
		SessionID: sessionID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   userID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
	})
	s, err := tok.SignedString(t.secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	return s, exp, nil
}

// Verify checks signature, algorithm, issuer and expiry, not the session:
// requests authenticate with Authenticate. A token verified before is
// answered from a short-lived cache while it has not expired.
func (t *Tokens) Verify(token string) (Principal, error) {
	now := t.now()
	// Keyed by the token's digest: the cache holds no usable token, and a
	// lookup compares digests, never the secret itself.
	key := sha256.Sum256([]byte(token))
	t.mu.RLock()
	v, ok := t.verified[key]
	t.mu.RUnlock()
	if ok && now.Before(v.expires) {
		return v.p, nil
	}
	p, exp, err := t.verify(token)
	if err != nil {
		return Principal{}, err
	}
	if limit := now.Add(verifyCacheTTL); exp.After(limit) {
		exp = limit
	}
	t.mu.Lock()
	if len(t.verified) >= verifyCacheMax {
		clear(t.verified)
	}
	t.verified[key] = verifiedToken{p: p, expires: exp}
	t.mu.Unlock()
	return p, nil
}

// verify parses and checks a token and returns its expiry.
func (t *Tokens) verify(token string) (Principal, time.Time, error) {
	var cl claims
	_, err := t.parser.ParseWithClaims(token, &cl, func(*jwt.Token) (any, error) { return t.secret, nil })
	if err != nil {
		return Principal{}, time.Time{}, fmt.Errorf("verify token: %w", err)
	}
	if cl.Subject == "" || cl.ExpiresAt == nil {
		return Principal{}, time.Time{}, errors.New("verify token: no subject")
	}
	return Principal{UserID: cl.Subject, Email: cl.Email, SessionID: cl.SessionID}, cl.ExpiresAt.Time, nil
}

// BearerToken extracts the token of `Authorization: Bearer <token>`, with the
// word Bearer and exactly one space.
func BearerToken(header string) (string, bool) {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

const principalKey = "auth.principal"

// SetUser stores an authenticated caller for User (for middleware that
// verifies a token itself).
func SetUser(c *fiber.Ctx, p Principal) { c.Locals(principalKey, p) }

// User returns the caller stored by Authenticator.Require or Optional.
func User(c *fiber.Ctx) (Principal, bool) {
	p, ok := c.Locals(principalKey).(Principal)
	return p, ok
}
