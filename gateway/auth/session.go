package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// SessionStore reads and touches login sessions.
type SessionStore interface {
	SessionState(ctx context.Context, id string, now time.Time) (identity.SessionState, error)
	TouchSession(ctx context.Context, id string, now time.Time) error
	RefreshSessions(ctx context.Context, ids, touch []string, now time.Time) (live []string, err error)
}

var _ SessionStore = (*identity.Users)(nil)

// Session-check timings: a process trusts what the database said about a
// session for less than SessionCacheTTL (so a session ended by another
// gateway process is refused here within that time), re-confirms the
// sessions in use every SessionRefreshEvery in one statement (Run), and
// writes last_seen_at at most once per SessionTouchEvery, never on every
// request.
const (
	SessionCacheTTL     = 2 * time.Second
	SessionRefreshEvery = SessionCacheTTL / 2
	SessionTouchEvery   = time.Minute
	sessionCacheMax     = 100_000
	// sessionEvictAfter drops an entry nobody used for that long: a live
	// one is stale by then and would be read again anyway; an ended one is
	// kept that long so that a read in flight when this process ended it
	// cannot bring it back (see keep).
	sessionEvictAfter = time.Minute
	// usedEvery is how stale an entry's last-use mark may get: a hit writes
	// it only when it moved by more, so most hits write nothing.
	usedEvery = 100 * time.Millisecond
)

// ErrSessionEnded is a token whose session was ended, expired or never
// existed, or a token without a session (issued before sessions existed).
var ErrSessionEnded = errors.New("auth: the token's session is not live")

// Sessions answers whether a token's session is live from an in-process
// cache of what the database said less than SessionCacheTTL ago, so the
// per-request cost is a map lookup.
//
// The database sees one statement per SessionRefreshEvery per process
// however many sessions are in use: Run re-checks every session used in the
// last SessionCacheTTL with one `id = ANY($1)` read by primary key
// (RefreshSessions), which also carries the due last_seen_at writes. A
// session seen for the first time, or whose confirmation is SessionCacheTTL
// old (not used lately, or the refresh failing), is read alone before it is
// trusted, as before. A session this process ends is forgotten at once
// (Ended); one ended elsewhere is refused here within SessionCacheTTL of
// its end's commit.
//
// Why re-check the ids rather than ask what ended since the last refresh:
// ended_at is stamped by the ending process's clock before its commit, so a
// "since T" feed misses an end that commits late or comes from a gateway
// whose clock lags, unless it keeps an overlap window no transaction can be
// proven to stay within; an xid/sequence feed needs snapshot bookkeeping
// and a new indexed column written by every end. The re-check relies on
// nothing but the snapshot: it starts after `start`, so it sees every end
// committed before `start`, and the entry is then trusted until
// start+SessionCacheTTL, the same bound as a single read. Its cost is one
// index probe per session in use, inside one statement.
type Sessions struct {
	store SessionStore
	now   func() time.Time
	// Log, if set, reports a failing refresh (once per run of failures).
	Log *slog.Logger

	mu    sync.RWMutex
	cache map[string]*sessionEntry
}

// sessionState is what the database last said about a session.
type sessionState uint8

const (
	// stateUnknown: no such row. It is read again after SessionCacheTTL,
	// as a row committed since may exist by then.
	stateUnknown sessionState = iota
	stateLive
	// stateEnded: ended, expired or ended here. An end is final (ended_at
	// is never cleared, expires_at never moved), so it is never read again.
	stateEnded
)

// sessionEntry is one cached session. Its fields change only under
// Sessions.mu held for writing; used is written by hits under the read lock.
type sessionEntry struct {
	userID   string
	state    sessionState
	expires  time.Time // refused from then on, whatever the last read said
	verified time.Time // taken before the read that last confirmed the state
	lastSeen time.Time
	used     atomic.Int64 // unix nanoseconds of the last check that trusted it
}

// trusted reports whether the entry's answer may be used at now without a
// read: an end always, anything else for less than SessionCacheTTL after
// the read that confirmed it (a clock that went back counts as stale).
func (e *sessionEntry) trusted(now time.Time) bool {
	if e.state == stateEnded {
		return true
	}
	return !now.Before(e.verified) && now.Sub(e.verified) < SessionCacheTTL
}

func (e *sessionEntry) markUsed(now time.Time) {
	if n := now.UnixNano(); n-e.used.Load() >= int64(usedEvery) {
		e.used.Store(n)
	}
}

func (e *sessionEntry) usedAt() time.Time { return time.Unix(0, e.used.Load()) }

// NewSessions builds the check over store. Run keeps it cheap; without Run
// it is still correct, reading each session in use once per SessionCacheTTL.
func NewSessions(store SessionStore, now func() time.Time) (*Sessions, error) {
	if store == nil || now == nil {
		return nil, errors.New("auth sessions: nil dependency")
	}
	return &Sessions{store: store, now: now, cache: map[string]*sessionEntry{}}, nil
}

// Check returns nil when the principal's session is live and belongs to
// its user, ErrSessionEnded when not, or the store's error when the
// session must be read and the read fails.
func (s *Sessions) Check(ctx context.Context, p Principal) error {
	if p.SessionID == "" {
		return ErrSessionEnded
	}
	now := s.now()
	s.mu.RLock()
	e, ok := s.cache[p.SessionID]
	var st sessionState
	var userID string
	var expires, lastSeen time.Time
	trusted := ok && e.trusted(now)
	switch {
	case trusted:
		st, userID, expires = e.state, e.userID, e.expires
		e.markUsed(now)
	case ok:
		lastSeen = e.lastSeen
	}
	s.mu.RUnlock()
	if !trusted {
		var err error
		if st, userID, expires, err = s.load(ctx, p.SessionID, now, lastSeen); err != nil {
			return err
		}
	}
	if st != stateLive || !now.Before(expires) || userID != p.UserID {
		return ErrSessionEnded
	}
	return nil
}

// load reads the session and, when its last_seen_at is older than
// SessionTouchEvery, records that it is in use; lastSeen is what this
// process last wrote there, which the row may not show yet.
func (s *Sessions) load(ctx context.Context, id string, now, lastSeen time.Time) (sessionState, string, time.Time, error) {
	row, err := s.store.SessionState(ctx, id, now)
	switch {
	case errors.Is(err, postgres.ErrNotFound):
		row = identity.SessionState{}
	case err != nil:
		return 0, "", time.Time{}, fmt.Errorf("session check: %w", err)
	}
	st := stateUnknown
	switch {
	case row.Live:
		st = stateLive
	case row.UserID != "":
		st = stateEnded
	}
	if lastSeen.After(row.LastSeenAt) {
		row.LastSeenAt = lastSeen
	}
	if st == stateLive && now.Sub(row.LastSeenAt) >= SessionTouchEvery {
		if err := s.store.TouchSession(ctx, id, now); err != nil {
			return 0, "", time.Time{}, err
		}
		row.LastSeenAt = now
	}
	e := &sessionEntry{userID: row.UserID, state: st, expires: row.ExpiresAt, verified: now, lastSeen: row.LastSeenAt}
	e.markUsed(now)
	return s.keep(id, e), e.userID, e.expires, nil
}

// keep caches a fresh read and returns the state to answer with. An end
// recorded meanwhile (Ended, or a refresh) wins over a read that may have
// begun before it.
func (s *Sessions) keep(id string, e *sessionEntry) sessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.cache[id]; ok {
		if old.state == stateEnded {
			old.markUsed(s.now())
			return stateEnded
		}
		if old.lastSeen.After(e.lastSeen) {
			e.lastSeen = old.lastSeen
		}
	}
	if len(s.cache) >= sessionCacheMax {
		clear(s.cache)
	}
	s.cache[id] = e
	return e.state
}

// Ended marks sessions this process just ended: they are refused here at
// once, before the cache would re-read them.
func (s *Sessions) Ended(ids ...string) {
	now := s.now()
	s.mu.Lock()
	for _, id := range ids {
		e := &sessionEntry{state: stateEnded, verified: now}
		e.markUsed(now)
		s.cache[id] = e
	}
	s.mu.Unlock()
}

// Run refreshes the cache every SessionRefreshEvery until ctx ends. A
// failing refresh is retried at the next tick; meanwhile entries age past
// SessionCacheTTL and Check reads each alone, failing as that read fails.
func (s *Sessions) Run(ctx context.Context) error {
	t := time.NewTicker(SessionRefreshEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, SessionCacheTTL)
		err := s.Refresh(rctx)
		cancel()
		switch {
		case err != nil && !failing && ctx.Err() == nil && s.Log != nil:
			s.Log.Warn("session refresh failing: sessions are read one by one until it recovers", "err", err)
		case err == nil && failing && s.Log != nil:
			s.Log.Info("session refresh recovered")
		}
		failing = err != nil
	}
}

// Refresh re-confirms, in one statement, every live session used in the
// last SessionCacheTTL, and writes last_seen_at of those last seen
// SessionTouchEvery ago. A session it finds not live is refused from then
// on; entries nobody used for sessionEvictAfter are dropped. On error no
// entry is re-confirmed.
func (s *Sessions) Refresh(ctx context.Context) error {
	// start is taken before the statement, whose snapshot is taken after
	// it: every end committed before start is in the answer.
	start := s.now()
	var ids, touch []string
	s.mu.Lock()
	for id, e := range s.cache {
		used := e.usedAt()
		switch {
		case start.Sub(used) >= sessionEvictAfter:
			delete(s.cache, id)
		case e.state == stateLive && start.Before(e.expires) && start.Sub(used) < SessionCacheTTL:
			ids = append(ids, id)
			if start.Sub(e.lastSeen) >= SessionTouchEvery {
				touch = append(touch, id)
			}
		}
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	live, err := s.store.RefreshSessions(ctx, ids, touch, start)
	if err != nil {
		return fmt.Errorf("session refresh: %w", err)
	}
	confirmed := make(map[string]struct{}, len(live))
	for _, id := range live {
		confirmed[id] = struct{}{}
	}
	touched := make(map[string]struct{}, len(touch))
	for _, id := range touch {
		touched[id] = struct{}{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		e, ok := s.cache[id]
		if !ok || e.state != stateLive {
			continue // dropped, or ended here meanwhile: that stands
		}
		if _, ok := confirmed[id]; !ok {
			// Ended, expired or gone: anything the statement did not
			// confirm is refused.
			e.state = stateEnded
			continue
		}
		if e.verified.Before(start) {
			e.verified = start
		}
		if _, ok := touched[id]; ok && e.lastSeen.Before(start) {
			e.lastSeen = start
		}
	}
	return nil
}

// IssueSession signs a token for the user's login session sessionID that
// expires after the TTL, and returns the token and its expiry.
func (t *Tokens) IssueSession(userID, email, sessionID string) (string, time.Time, error) {
	return t.issue(userID, email, sessionID)
}
