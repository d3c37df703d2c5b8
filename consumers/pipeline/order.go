package pipeline

import (
	"errors"
	"sync"
)

// Overlapped batches. While batch N commits, the runner may poll batch N+1
// (Config.Overlap) and start its transaction on another connection. Every
// transaction of a worker first takes the worker's advisory lock
// (pipeline.QueueOrderLock, in the same round trip as its first reads),
// so N+1's statements run only once N's transaction has ended and read
// what N committed: the balances N changed, the command ids N recorded.
// Three rules keep exactly-once and the order of each partition:
//
//   - N+1 asks for the lock only once N holds it (turn.locked), so the lock
//     is granted in batch order;
//   - N+1 commits only once N's first transaction committed (turn.ended,
//     turn.ok); if it did not, N+1 rolls back, waits until N is finished
//     (retried, split, parked: turn.done), and applies itself again after;
//   - offsets and replies of N+1 follow N's: the runner marks a poll only
//     after the one before it, and a batch replies only after its commit.
//
// No batch waits in Go for another while it holds the lock, except for the
// ended signal of the batch before it, which has ended already when the lock
// was granted: the locks cannot deadlock.

// errBeforeFailed is the error of an overlapped transaction rolled back
// because the batch before it did not commit first.
var errBeforeFailed = errors.New("the batch before this one did not commit")

// turn is one batch's place in its worker's order of transactions, as seen
// by the batch after it.
type turn struct {
	locked     chan struct{} // the first transaction holds the lock, or ended without it
	committing chan struct{} // the first transaction sent its COMMIT, or ended
	ended      chan struct{} // the first transaction committed or rolled back
	journaling chan struct{} // the batch committed and produced its journal entries, waiting only for their acknowledgement
	done       chan struct{} // the batch is finished: everything committed, or it gave up

	onceLocked, onceCommitting, onceEnded, onceJournaling, onceDone sync.Once

	ok     bool // set before ended closes: the first transaction committed, or there was none
	failed bool // set before done closes: the batch gave up, nothing after it may commit
}

func newTurn() *turn {
	return &turn{locked: make(chan struct{}), committing: make(chan struct{}),
		ended: make(chan struct{}), journaling: make(chan struct{}), done: make(chan struct{})}
}

func (t *turn) hold() {
	if t != nil {
		t.onceLocked.Do(func() { close(t.locked) })
	}
}

func (t *turn) commit() {
	if t != nil {
		t.onceCommitting.Do(func() { close(t.committing) })
	}
}

// end records how the first transaction ended; later calls change nothing.
func (t *turn) end(ok bool) {
	if t == nil {
		return
	}
	t.onceEnded.Do(func() { t.ok = ok; close(t.ended) })
	t.hold()
	t.commit()
}

// journal records that the batch committed and produced its journal
// entries; it waits only for their acknowledgement, then replies.
func (t *turn) journal() {
	if t != nil {
		t.onceJournaling.Do(func() { close(t.journaling) })
	}
}

// finish records that the batch is finished (failed: it gave up).
func (t *turn) finish(failed bool) {
	if t == nil {
		return
	}
	t.end(!failed)
	t.onceDone.Do(func() { t.failed = failed; close(t.done) })
}

// place is where one transaction of a batch stands: the advisory lock of
// its worker and, for the batch's first transaction when it overlaps the
// batch before, both batches' turns.
type place struct {
	lock   int64
	before *turn // nil: no batch of this worker is in flight before this one
	own    *turn // nil for the retries of a batch
	// pos are the batch's positions when this transaction stores them
	// (position.go); the transactions of a split batch only check them
	// (fenceOnly): the batch stores them once its commands are applied.
	pos       *batchPositions
	fenceOnly bool
}

// waitLocked waits until the batch before holds the lock, so that this
// transaction's lock request queues behind it. It reports false when that
// batch's first transaction already failed: this one should not start.
func (p place) waitLocked() bool {
	if p.before == nil {
		return true
	}
	<-p.before.locked
	select {
	case <-p.before.ended:
		return p.before.ok
	default:
		return true
	}
}

// mayCommit waits until the batch before has committed or failed, and
// reports whether this transaction may commit.
func (p place) mayCommit() bool {
	if p.before == nil {
		return true
	}
	<-p.before.ended
	return p.before.ok
}
