package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	storage "github.com/fintech/platform/storage/pipeline"
)

// Reproducing a first outcome.
//
// A command re-applied with its journal entry (Command.Recorded, journal.go)
// gives the answer it gave the first time, or none:
//
//   - A recorded rejection is not decided again: the runner stores and
//     sends the recorded answer, and nothing changes (a rejection changed
//     nothing the first time either). Its events (transfer.failed) were
//     published by the first application and are not emitted again.
//     A rejection whose status the handler says writes (RejectionWriter: a
//     declined mask charge is a row later risk scores read) is decided
//     again like a success below, and must decide the same status.
//   - A recorded success is decided again, with the clock of its first
//     application (Command.Clock), which mints the same ids (derived from
//     the command); its stored and sent answer is the recorded body, what
//     the client was told. When it now decides a rejection, what it needs
//     has not been re-applied yet: the restored partitions are re-applied
//     in another order than the first time, and a credit from another
//     partition may come later. It waits (Passes): its partition is held
//     back from it, not recorded and not committed, and applied again in a
//     later batch, while the other partitions go on. The first order was
//     valid and every debit of a wallet comes from the wallet's own
//     partition, so the command that came first of those held is always
//     decidable once the others caught up: holding never wedges a
//     re-application that can reproduce its outcomes.
//   - A recorded success that now decides another success (another status)
//     cannot be reproduced: the batch is rolled back and the runner stops
//     with a *DivergedError naming the command and both outcomes. A command
//     held for longer than holdWarnAfter is named in one error line too.

// holdWarnAfter is how long a command may be held before an error line
// names it with both outcomes.
const holdWarnAfter = time.Minute

// holdRetry is how long a runner waits for more records before it applies
// the ones it held back again.
const holdRetry = 200 * time.Millisecond

// DivergedError is a re-applied command that decided another success than
// the first time: nothing is recorded and the runner stops.
type DivergedError struct {
	CommandID, Type string
	Recorded        Recorded
	Now             Outcome
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("re-applying command %s (%s) decides %d %s, but it was answered %d %s the first time: "+
		"the runner stops rather than record another outcome", e.CommandID, e.Type, e.Now.Status, e.Now.Body,
		e.Recorded.Status, e.Recorded.Body)
}

// Passes decides the commands of a batch, in order, with decide, which
// applies cmds[i] to the batch's state and returns its outcome; a
// handler's loop over its commands calls it. Without re-applied commands
// it is that loop; an error of decide (a failure that is not the
// command's: a database error, the random source) stops it and is
// returned, which rolls the batch back. With some, each partition's commands are a queue
// decided in passes: a re-applied command whose decision differs from its
// recorded one is a rejection that changed nothing, and it stops its queue
// for this pass; the passes go on while any queue moves. What is still
// queued at the end is Held. A re-applied command that decides another
// success returns a *DivergedError (the batch must be rolled back).
func Passes(cmds []Command, decide func(i int) (Outcome, error)) ([]Outcome, error) {
	out := make([]Outcome, len(cmds))
	reapplied := false
	for _, c := range cmds {
		reapplied = reapplied || c.Recorded != nil
	}
	if !reapplied {
		for i := range cmds {
			o, err := decide(i)
			if err != nil {
				return nil, err
			}
			out[i] = o
		}
		return out, nil
	}
	var order []partitionKey
	queues := map[partitionKey][]int{}
	for i, c := range cmds {
		k := partitionKey{c.Topic, c.Partition}
		if _, ok := queues[k]; !ok {
			order = append(order, k)
		}
		queues[k] = append(queues[k], i)
	}
	for moved := true; moved; {
		moved = false
		for _, k := range order {
			q := queues[k]
			for len(q) > 0 {
				i := q[0]
				o, err := decide(i)
				if err != nil {
					return nil, err
				}
				if rec := cmds[i].Recorded; rec != nil && o.Status != rec.Status {
					if o.Status < 400 {
						return nil, &DivergedError{CommandID: cmds[i].Env.ID, Type: cmds[i].Env.Type, Recorded: *rec, Now: o}
					}
					out[i] = o // changed nothing; kept to name it while held
					break
				}
				out[i], q, moved = o, q[1:], true
			}
			queues[k] = q
		}
	}
	for _, k := range order {
		for _, i := range queues[k] {
			out[i] = Outcome{Held: true, Status: out[i].Status, Body: out[i].Body}
		}
	}
	return out, nil
}

// heldFrom returns, per partition, the offset of the first command a batch
// held back: its records from there on are applied again later.
func heldFrom(cmds []Command) map[partitionKey]int64 {
	var from map[partitionKey]int64
	for _, c := range cmds {
		if c.Recorded == nil || !c.Recorded.held {
			continue
		}
		if from == nil {
			from = map[partitionKey]int64{}
		}
		k := partitionKey{c.Topic, c.Partition}
		if o, ok := from[k]; !ok || c.Offset < o {
			from[k] = c.Offset
		}
	}
	return from
}

// isHeld reports whether c is at or after its partition's held command.
func isHeld(from map[partitionKey]int64, c Command) bool {
	o, ok := from[partitionKey{c.Topic, c.Partition}]
	return ok && c.Offset >= o
}

// holdPositions moves the positions of the held partitions back to their
// first held command.
func holdPositions(ps []storage.Position, from map[partitionKey]int64) {
	for i, p := range ps {
		if o, ok := from[partitionKey{p.Topic, p.Partition}]; ok && o < p.Next {
			ps[i].Next = o
		}
	}
}

// carried are the records a batch held back, applied again before what
// the partitions' next polls bring.
func carried(recs []*kgo.Record, from map[partitionKey]int64) []*kgo.Record {
	if len(from) == 0 {
		return nil
	}
	var out []*kgo.Record
	for _, rec := range recs {
		if o, ok := from[partitionKey{rec.Topic, rec.Partition}]; ok && rec.Offset >= o {
			out = append(out, rec)
		}
	}
	return out
}

// holds remembers since when each held command waits, to name the ones
// that wait too long.
type holds struct {
	mu    sync.Mutex
	since map[string]time.Time
	named map[string]bool
}

// note logs the commands cmds holds back, once when they start waiting and
// once more, as an error naming both outcomes, when they waited
// holdWarnAfter.
func (r *Runner) noteHolds(cmds []Command) {
	r.holds.mu.Lock()
	defer r.holds.mu.Unlock()
	if r.holds.since == nil {
		r.holds.since, r.holds.named = map[string]time.Time{}, map[string]bool{}
	}
	for _, c := range cmds {
		if c.Recorded == nil {
			continue
		}
		id := c.Env.ID
		if !c.Recorded.held {
			delete(r.holds.since, id)
			continue
		}
		since, ok := r.holds.since[id]
		if !ok {
			r.holds.since[id] = time.Now()
			r.log.Info("re-applied command waits for other partitions to reproduce its outcome", "id", id,
				"type", c.Env.Type, "topic", c.Topic, "partition", c.Partition, "offset", c.Offset)
			continue
		}
		if time.Since(since) > holdWarnAfter && !r.holds.named[id] {
			r.holds.named[id] = true
			r.log.Error(fmt.Sprintf("re-applying command %s (%s) still decides %d %s, but it was answered %d %s the first time: "+
				"its partition waits", id, c.Env.Type, c.Recorded.now.Status, c.Recorded.now.Body, c.Recorded.Status, c.Recorded.Body),
				"topic", c.Topic, "partition", c.Partition, "offset", c.Offset, "waiting", time.Since(since).Round(time.Second))
		}
	}
}

// reproduce checks the outcomes of the re-applied fresh commands against
// their recorded ones and notes the partitions held back. A handler that
// does not decide through Passes cannot hold a command back (it decided
// the ones after it already): any difference is a *DivergedError.
func (s *sorted) reproduce(outcomes []Outcome) error {
	for k, c := range s.fresh {
		o, rec := outcomes[k], c.Recorded
		switch {
		case rec == nil:
		case o.Held:
			rec.held, rec.now = true, o
		case o.Status != rec.Status:
			return &DivergedError{CommandID: c.Env.ID, Type: c.Env.Type, Recorded: *rec, Now: o}
		}
	}
	s.held = heldFrom(s.fresh)
	return nil
}

type indexed struct {
	Command
	i int
}

// reproducedCmds are the re-applied commands answered with their recorded
// rejection.
func (s *sorted) reproducedCmds() []indexed {
	if len(s.reproduced) == 0 {
		return nil
	}
	out := make([]indexed, len(s.reproduced))
	for j, i := range s.reproduced {
		out[j] = indexed{s.cmds[i], i}
	}
	return out
}

// forget drops what a runner kept of the partitions it no longer owns: the
// journal entries and the held records (their next owner starts from the
// stored position, at the first held record).
func (r *Runner) forget(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	r.replays.drop(lost)
	r.carryMu.Lock()
	defer r.carryMu.Unlock()
	kept := r.carry[:0]
	for _, rec := range r.carry {
		if !slices.Contains(lost[rec.Topic], rec.Partition) {
			kept = append(kept, rec)
		}
	}
	r.carry = kept
}

// takeCarry returns the held records to apply again, before recs.
func (r *Runner) takeCarry(recs []*kgo.Record) []*kgo.Record {
	r.carryMu.Lock()
	defer r.carryMu.Unlock()
	if len(r.carry) == 0 {
		return recs
	}
	out := append(r.carry, recs...)
	r.carry = nil
	return out
}

func (r *Runner) setCarry(recs []*kgo.Record) {
	r.carryMu.Lock()
	defer r.carryMu.Unlock()
	r.carry = append(r.carry, recs...)
}

// holding reports whether held records wait to be applied again.
func (r *Runner) holding() bool {
	r.carryMu.Lock()
	defer r.carryMu.Unlock()
	return len(r.carry) > 0
}

// reproducing reports whether the runner re-applies commands: it then
// reads a poll only once the batch before is finished, so that what that
// batch holds back goes before the partitions' next records.
func (r *Runner) reproducing() bool { return r.holding() || r.replays.pending() }
