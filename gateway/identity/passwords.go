package identity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/alexedwards/argon2id"
)

// hashParams follow OWASP's argon2id minimum (19 MiB, 2 passes): strong,
// and cheap enough that registrations do not starve a 2-core box.
var hashParams = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// hashBytes is the memory one hash holds while it runs.
const hashBytes = int64(19 * 1024 * 1024)

// DefaultHashWait is how long a request waits for a hashing slot before it
// is turned away: a burst of logins queues for a moment, never without end.
const DefaultHashWait = 3 * time.Second

// ErrHashBusy is a password that waited longer than the bound for a hashing
// slot; the request is answered 429 rate_limited with a Retry-After.
var ErrHashBusy = errors.New("identity: every password-hashing slot stayed busy")

// Passwords hashes and checks passwords with argon2id, at most a fixed
// number at once: each hash takes 19 MiB and a core for tens of
// milliseconds, so a burst of logins or registrations would otherwise
// exhaust memory and starve everything else on the machine.
type Passwords struct {
	slots chan struct{}
	wait  time.Duration
	// hash and compare are argon2id's; tests observe them.
	hash    func(password string, p *argon2id.Params) (string, error)
	compare func(password, hash string) (bool, error)
}

// NewPasswords allows limit hashes at once (DefaultHashLimit when < 1);
// a caller waits at most wait (DefaultHashWait when <= 0) for a slot.
func NewPasswords(limit int, wait time.Duration) *Passwords {
	if limit < 1 {
		limit = DefaultHashLimit()
	}
	if wait <= 0 {
		wait = DefaultHashWait
	}
	return &Passwords{slots: make(chan struct{}, limit), wait: wait,
		hash: argon2id.CreateHash, compare: argon2id.ComparePasswordAndHash}
}

// DefaultHashLimit is one hash per usable core (GOMAXPROCS), fewer when a
// soft memory limit (MEMORY_LIMIT / GOMEMLIMIT) is set: hash buffers may
// take at most a quarter of it.
func DefaultHashLimit() int {
	n := runtime.GOMAXPROCS(0)
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		n = min(n, int(max(limit/4/hashBytes, 1)))
	}
	return max(n, 1)
}

// Limit is how many hashes may run at once.
func (p *Passwords) Limit() int { return cap(p.slots) }

// Hash returns the argon2id hash of password.
func (p *Passwords) Hash(ctx context.Context, password string) (string, error) {
	release, err := p.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	h, err := p.hash(password, hashParams)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// Compare reports whether password matches hash.
func (p *Passwords) Compare(ctx context.Context, password, hash string) (bool, error) {
	release, err := p.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	ok, err := p.compare(password, hash)
	if err != nil {
		return false, fmt.Errorf("compare password: %w", err)
	}
	return ok, nil
}

// acquire takes a slot, waiting at most p.wait (or until ctx ends).
func (p *Passwords) acquire(ctx context.Context) (func(), error) {
	release := func() { <-p.slots }
	select {
	case p.slots <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case p.slots <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, ErrHashBusy
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrHashBusy, ctx.Err())
	}
}
