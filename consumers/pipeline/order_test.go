package pipeline

import (
	"sync/atomic"
	"testing"
)

// closed reports whether ch is closed, without waiting.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestTurnSignals: each signal of a batch's turn closes once, in order, and
// ending or finishing closes the ones before it, so that the batch after
// never waits for a signal that will not come.
func TestTurnSignals(t *testing.T) {
	t.Parallel()
	tr := newTurn()
	if closed(tr.locked) || closed(tr.committing) || closed(tr.ended) || closed(tr.done) {
		t.Fatal("a new turn has a signal closed")
	}
	tr.hold()
	tr.hold()
	if !closed(tr.locked) || closed(tr.committing) || closed(tr.ended) {
		t.Fatal("hold closed something other than locked")
	}
	tr.commit()
	if !closed(tr.committing) || closed(tr.ended) {
		t.Fatal("commit closed something other than committing")
	}
	tr.end(true)
	tr.end(false) // later calls change nothing
	if !closed(tr.ended) || !tr.ok || closed(tr.done) {
		t.Fatalf("after end(true), end(false): ended %v ok %v done %v", closed(tr.ended), tr.ok, closed(tr.done))
	}
	tr.finish(false)
	if !closed(tr.done) || tr.failed || !tr.ok {
		t.Fatalf("after finish(false): done %v failed %v ok %v", closed(tr.done), tr.failed, tr.ok)
	}

	var none *turn // the retries of a batch have no turn
	none.hold()
	none.commit()
	none.end(true)
	none.finish(true)
}

func TestTurnEndWithoutLockClosesEverythingBefore(t *testing.T) {
	t.Parallel()
	tr := newTurn()
	tr.end(false)
	if !closed(tr.locked) || !closed(tr.committing) || !closed(tr.ended) || tr.ok {
		t.Fatalf("end(false) before the lock: locked %v committing %v ended %v ok %v",
			closed(tr.locked), closed(tr.committing), closed(tr.ended), tr.ok)
	}
}

func TestTurnFinish(t *testing.T) {
	t.Parallel()
	t.Run("gave up before its first transaction ended", func(t *testing.T) {
		tr := newTurn()
		tr.finish(true)
		if !closed(tr.locked) || !closed(tr.committing) || !closed(tr.ended) || !closed(tr.done) {
			t.Fatal("finish left a signal open")
		}
		if tr.ok || !tr.failed {
			t.Fatalf("ok %v failed %v, want false true", tr.ok, tr.failed)
		}
	})
	t.Run("first transaction committed, a later one gave up", func(t *testing.T) {
		tr := newTurn()
		tr.end(true)
		tr.finish(true)
		if !tr.ok || !tr.failed {
			t.Fatalf("ok %v failed %v, want true true", tr.ok, tr.failed)
		}
	})
	t.Run("finished", func(t *testing.T) {
		tr := newTurn()
		tr.finish(false)
		tr.finish(true) // later calls change nothing
		if !tr.ok || tr.failed {
			t.Fatalf("ok %v failed %v, want true false", tr.ok, tr.failed)
		}
	})
}

// TestPlaceAlone: a transaction with no batch before it neither waits nor
// is refused.
func TestPlaceAlone(t *testing.T) {
	t.Parallel()
	p := place{lock: 1, own: newTurn()}
	if !p.waitLocked() || !p.mayCommit() {
		t.Fatal("a transaction with nothing before it was refused")
	}
}

// TestPlaceWaitLocked: a transaction asks for the lock only once the batch
// before holds it, and does not start when that batch's first transaction
// already failed.
func TestPlaceWaitLocked(t *testing.T) {
	t.Parallel()
	t.Run("waits for the lock", func(t *testing.T) {
		before := newTurn()
		var held atomic.Bool
		got := make(chan bool)
		go func() {
			ok := place{before: before}.waitLocked()
			if !held.Load() {
				t.Error("waitLocked returned before the batch before held the lock")
			}
			got <- ok
		}()
		held.Store(true)
		before.hold()
		if !<-got {
			t.Fatal("waitLocked = false while the batch before holds the lock")
		}
	})
	t.Run("before committed", func(t *testing.T) {
		before := newTurn()
		before.end(true)
		if !(place{before: before}).waitLocked() {
			t.Fatal("waitLocked = false after the batch before committed")
		}
	})
	t.Run("before failed", func(t *testing.T) {
		before := newTurn()
		before.end(false)
		if (place{before: before}).waitLocked() {
			t.Fatal("waitLocked = true after the batch before rolled back")
		}
	})
}

// TestPlaceMayCommit: a transaction commits only after the batch before
// committed, and not at all when that one rolled back.
func TestPlaceMayCommit(t *testing.T) {
	t.Parallel()
	for _, ok := range []bool{true, false} {
		before := newTurn()
		before.hold()
		before.commit()
		var ended atomic.Bool
		got := make(chan bool)
		go func() {
			may := place{before: before}.mayCommit()
			if !ended.Load() {
				t.Error("mayCommit returned before the batch before ended")
			}
			got <- may
		}()
		ended.Store(true)
		before.end(ok)
		if may := <-got; may != ok {
			t.Fatalf("before ended ok=%v: mayCommit = %v", ok, may)
		}
	}
}
