package identity

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
)

// TestPasswordsBoundConcurrency: a burst of 12 hashes and compares never
// runs more than the limit at once; the ones that wait longer than the bound
// give up with ErrHashBusy instead of piling up.
func TestPasswordsBoundConcurrency(t *testing.T) {
	const limit, burst = 3, 12
	p := NewPasswords(limit, 50*time.Millisecond)
	var running, peak atomic.Int32
	gate := make(chan struct{})
	observe := func() {
		n := running.Add(1)
		for {
			m := peak.Load()
			if n <= m || peak.CompareAndSwap(m, n) {
				break
			}
		}
		<-gate
		running.Add(-1)
	}
	p.hash = func(pw string, params *argon2id.Params) (string, error) { observe(); return "h", nil }
	p.compare = func(pw, hash string) (bool, error) { observe(); return true, nil }

	var wg sync.WaitGroup
	var busy atomic.Int32
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, err = p.Hash(context.Background(), "correct-horse")
			} else {
				_, err = p.Compare(context.Background(), "correct-horse", "h")
			}
			if errors.Is(err, ErrHashBusy) {
				busy.Add(1)
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	// The first `limit` hold their slots until every other caller gave up.
	deadline := time.Now().Add(5 * time.Second)
	for busy.Load() < burst-limit && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := running.Load(); got != limit {
		t.Fatalf("%d hashes running, want %d", got, limit)
	}
	close(gate)
	wg.Wait()
	if peak.Load() != limit || busy.Load() != burst-limit {
		t.Fatalf("peak %d (limit %d), %d turned away (want %d)", peak.Load(), limit, busy.Load(), burst-limit)
	}

	// Freed slots serve later callers; a cancelled wait is busy too.
	if _, err := p.Hash(context.Background(), "correct-horse"); err != nil {
		t.Fatal(err)
	}
	for range limit {
		p.slots <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Hash(ctx, "x"); !errors.Is(err, ErrHashBusy) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// TestPasswordsHashAndCompare: the bound keeps argon2id's answers.
func TestPasswordsHashAndCompare(t *testing.T) {
	p := NewPasswords(0, 0)
	if p.Limit() < 1 {
		t.Fatalf("limit %d", p.Limit())
	}
	h, err := p.Hash(context.Background(), "correct-horse")
	if err != nil {
		t.Fatal(err)
	}
	for pw, want := range map[string]bool{"correct-horse": true, "wrong-horse": false} {
		if ok, err := p.Compare(context.Background(), pw, h); err != nil || ok != want {
			t.Fatalf("compare %q: %v %v", pw, ok, err)
		}
	}
}
