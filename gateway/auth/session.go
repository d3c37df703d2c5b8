package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// SessionStore reads and touches login sessions.
type SessionStore interface {
	SessionState(ctx context.Context, id string, now time.Time) (identity.SessionState, error)
	TouchSession(ctx context.Context, id string, now time.Time) error
}

var _ SessionStore = (*identity.Users)(nil)

// Session-check timings: a process re-reads a session it has in its cache
// after SessionCacheTTL (so a session ended by another gateway process is
// refused here within that time), and writes last_seen_at at most once per
// SessionTouchEvery, never on every request.
const (
	SessionCacheTTL   = 2 * time.Second
	SessionTouchEvery = time.Minute
	sessionCacheMax   = 100_000
)

// ErrSessionEnded is a token whose session was ended, expired or never
// existed, or a token without a session (issued before sessions existed).
var ErrSessionEnded = errors.New("auth: the token's session is not live")

// Sessions answers whether a token's session is live: from an in-process
// cache of what the database said at most SessionCacheTTL ago, so the
// per-request cost is a map lookup and the database sees one primary-key
// read per active session per SessionCacheTTL. A session this process ends
// is forgotten at once (Ended); one ended elsewhere is refused here after
// SessionCacheTTL at most.
type Sessions struct {
	store SessionStore
	now   func() time.Time

	mu    sync.RWMutex
	cache map[string]sessionEntry
}

type sessionEntry struct {
	userID   string
	live     bool
	checked  time.Time
	lastSeen time.Time
}

// NewSessions builds the check over store.
func NewSessions(store SessionStore, now func() time.Time) (*Sessions, error) {
	if store == nil || now == nil {
		return nil, errors.New("auth sessions: nil dependency")
	}
	return &Sessions{store: store, now: now, cache: map[string]sessionEntry{}}, nil
}

// Check returns nil when the principal's session is live and belongs to
// its user, ErrSessionEnded when not, or the store's error.
func (s *Sessions) Check(ctx context.Context, p Principal) error {
	if p.SessionID == "" {
		return ErrSessionEnded
	}
	now := s.now()
	s.mu.RLock()
	e, ok := s.cache[p.SessionID]
	s.mu.RUnlock()
	if !ok || now.Sub(e.checked) >= SessionCacheTTL || now.Before(e.checked) {
		var err error
		if e, err = s.load(ctx, p.SessionID, now, e); err != nil {
			return err
		}
	}
	if !e.live || e.userID != p.UserID {
		return ErrSessionEnded
	}
	return nil
}

// load reads the session and, when its last_seen_at is older than
// SessionTouchEvery, records that it is in use.
func (s *Sessions) load(ctx context.Context, id string, now time.Time, prev sessionEntry) (sessionEntry, error) {
	st, err := s.store.SessionState(ctx, id, now)
	switch {
	case errors.Is(err, postgres.ErrNotFound):
		st = identity.SessionState{}
	case err != nil:
		return sessionEntry{}, fmt.Errorf("session check: %w", err)
	}
	e := sessionEntry{userID: st.UserID, live: st.Live, checked: now, lastSeen: st.LastSeenAt}
	if prev.lastSeen.After(e.lastSeen) {
		e.lastSeen = prev.lastSeen
	}
	if e.live && now.Sub(e.lastSeen) >= SessionTouchEvery {
		if err := s.store.TouchSession(ctx, id, now); err != nil {
			return sessionEntry{}, err
		}
		e.lastSeen = now
	}
	s.mu.Lock()
	if len(s.cache) >= sessionCacheMax {
		clear(s.cache)
	}
	s.cache[id] = e
	s.mu.Unlock()
	return e, nil
}

// Ended marks sessions this process just ended: they are refused here at
// once, before the cache would re-read them.
func (s *Sessions) Ended(ids ...string) {
	now := s.now()
	s.mu.Lock()
	for _, id := range ids {
		s.cache[id] = sessionEntry{live: false, checked: now}
	}
	s.mu.Unlock()
}

// UseSessions makes every authentication through t (Require, Optional,
// Authenticate) also check the token's session: a token without one, or
// whose session ended, answers 401 auth_required. Call it once, at wiring,
// before the server serves.
func (t *Tokens) UseSessions(s *Sessions) { t.sessions = s }

// Sessions is the check UseSessions set (nil without one).
func (t *Tokens) Sessions() *Sessions { return t.sessions }

// Authenticate verifies a bearer token and, with sessions in use, that its
// session is live: the one check every route's authentication goes through.
func (t *Tokens) Authenticate(ctx context.Context, token string) (Principal, error) {
	p, err := t.Verify(token)
	if err != nil {
		return Principal{}, apierr.AuthRequired()
	}
	if t.sessions == nil {
		return p, nil
	}
	if err := t.sessions.Check(ctx, p); err != nil {
		if errors.Is(err, ErrSessionEnded) {
			return Principal{}, apierr.AuthRequired()
		}
		return Principal{}, err
	}
	return p, nil
}

// IssueSession signs a token for the user's login session sessionID that
// expires after the TTL, and returns the token and its expiry.
func (t *Tokens) IssueSession(userID, email, sessionID string) (string, time.Time, error) {
	return t.issue(userID, email, sessionID)
}
