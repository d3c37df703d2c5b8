package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/storage/pipeline"
)

// Positions in Postgres.
//
// A group's position of record is in the database it applies to: every
// batch's transaction also stores, per partition, the offset after its last
// record (consumer_positions), and a partition assigned to the group starts
// there when the Kafka group offset is ahead of it or missing (a group
// without one would start at the log start). The Kafka offset is
// still committed after each batch, for tools and lag, but it can be ahead
// of the database: after a restore to an earlier point it is, and starting
// from it would skip every command the restored database has not applied.
// A Kafka offset behind the stored one (a crash after the commit, before
// the offset commit) is kept: the records between are redelivered and
// answered from processed_commands, so their waiting requests get replies.
//
// The fenced upsert (see Fencing) rides in a round trip the batch sends
// anyway (the lookup of a plain handler, the reads of a Pipelined one): one
// statement more, no round trip more. A batch that is split to isolate a
// failing command stores its positions on its own after the parked
// records are on the DLQ, so that a crash in between redelivers them (the
// applied ones are answered from processed_commands); records that did not
// read are parked before the batch's transaction.
//
// When the records from a stored position are no longer on the topic
// (trimmed, past retention), or the topic ends before it (the broker lost
// records), the group stops with one line naming the topic, the partition
// and the missing range. Config.AcceptGap resumes at the first record the
// partition still has, recording the gap in consumer_gap_accepts.

// batchPositions are the positions one batch moves its partitions to.
type batchPositions struct {
	ps     []pipeline.Position
	saved  bool // a committed transaction of the batch stored them
	fenced bool // the fence refused them: the batch was not applied and its partitions were sought back
}

// positionsOf returns, per partition of recs, the offset of its first
// record and the offset after its last, and whether the runner holds a
// stored position there (held).
func (r *Runner) positionsOf(recs []*kgo.Record) *batchPositions {
	type tp struct {
		topic string
		part  int32
	}
	first, next := map[tp]int64{}, map[tp]int64{}
	var order []tp
	for _, rec := range recs {
		k := tp{rec.Topic, rec.Partition}
		if _, ok := next[k]; !ok {
			order = append(order, k)
			first[k] = rec.Offset
		}
		first[k], next[k] = min(first[k], rec.Offset), max(next[k], rec.Offset+1)
	}
	bp := &batchPositions{ps: make([]pipeline.Position, 0, len(order))}
	for _, k := range order {
		_, held := r.held.get(k.topic, k.part)
		bp.ps = append(bp.ps, pipeline.Position{Topic: k.topic, Partition: k.part, First: first[k], Next: next[k], Held: held})
	}
	return bp
}

// queuePositions puts the batch's positions, when this transaction carries
// them, on a round trip of the transaction.
func (r *Runner) queuePositions(b *pgx.Batch, at place) {
	if at.pos == nil {
		return
	}
	ps := at.pos.ps
	if at.fenceOnly {
		// Advanced to the first offsets: checked, not moved past anything.
		ps = make([]pipeline.Position, len(at.pos.ps))
		for i, p := range at.pos.ps {
			ps[i] = p
			ps[i].Next = p.First
		}
	}
	pipeline.QueueSavePositions(b, r.cfg.Group, ps)
}

// positionsCommitted records that the transaction carrying the positions
// committed.
func (r *Runner) positionsCommitted(at place) {
	if at.pos != nil && !at.fenceOnly {
		at.pos.saved = true
		r.held.set(at.pos.ps)
	}
}

// savePositions stores the positions of a batch whose transaction did not
// carry them, retrying until Postgres has them. When the fence refuses
// them, it seeks the batch's partitions back (seekBack) and returns nil.
func (r *Runner) savePositions(ctx, stop context.Context, bp *batchPositions) error {
	if bp == nil || bp.saved {
		return nil
	}
	backoff := 50 * time.Millisecond
	for {
		err := pipeline.SavePositions(ctx, r.pool, r.cfg.Group, bp.ps)
		if err == nil {
			bp.saved = true
			r.held.set(bp.ps)
			return nil
		}
		if fe, ok := pipeline.Fenced(err); ok {
			return r.seekBack(ctx, stop, fe, bp)
		}
		r.log.Warn("storing positions failed, retrying", "err", err)
		select {
		case <-stop.Done():
			return fmt.Errorf("shutdown while storing positions: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// Fencing. A batch's transaction advances its positions only when the
// stored ones are not below its first offsets (pipeline.QueueSavePositions):
// a running consumer that reconnects to a promoted server which lost
// commits (a lossy promotion), or a zombie whose partitions moved on
// without it, would otherwise apply its in-memory batch and jump over the
// records the database never applied, for good. Refused, the transaction
// rolls back and the runner seeks the batch's partitions back: those the
// fence named to their stored position (the log start where the row is
// gone), the others to the batch's own first offset; the client drops what
// it buffered of them, the batch's offsets are not marked, and the records
// come again, the lost range first. A partition has no row on a group's
// first batch there; the runner tells that from a lost row by holding the
// positions it stored or loaded (held).

// held are the positions the runner stored or loaded, per partition.
type held struct {
	mu sync.Mutex
	m  map[string]map[int32]int64
}

func (h *held) get(topic string, part int32) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next, ok := h.m[topic][part]
	return next, ok
}

func (h *held) set(ps []pipeline.Position) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]map[int32]int64{}
	}
	for _, p := range ps {
		if h.m[p.Topic] == nil {
			h.m[p.Topic] = map[int32]int64{}
		}
		h.m[p.Topic][p.Partition] = max(h.m[p.Topic][p.Partition], p.Next)
	}
}

// assign replaces what is held of the assigned partitions with what is
// stored of them.
func (h *held) assign(assigned map[string]map[int32]kgo.Offset, stored map[string]map[int32]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]map[int32]int64{}
	}
	for topic, ps := range assigned {
		for p := range ps {
			delete(h.m[topic], p)
			if next, ok := stored[topic][p]; ok {
				if h.m[topic] == nil {
					h.m[topic] = map[int32]int64{}
				}
				h.m[topic][p] = next
			}
		}
	}
}

// sought lowers what is held of partitions sought back to their stored
// positions (-1: none).
func (h *held) sought(to map[string]map[int32]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for topic, ps := range to {
		for p, next := range ps {
			if cur, ok := h.m[topic][p]; ok && next < cur {
				if next < 0 {
					delete(h.m[topic], p)
				} else {
					h.m[topic][p] = next
				}
			}
		}
	}
}

func (h *held) snapshot() map[string]map[int32]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]map[int32]int64, len(h.m))
	for topic, ps := range h.m {
		out[topic] = make(map[int32]int64, len(ps))
		for p, next := range ps {
			out[topic][p] = next
		}
	}
	return out
}

// seekBack seeks the partitions of a fenced batch back (see Fencing) and
// marks the batch fenced, retrying until the broker answers (or stop). A
// stored position the topic no longer holds stops the runner on the gap,
// as at assignment.
func (r *Runner) seekBack(ctx, stop context.Context, fe *pipeline.FencedError, bp *batchPositions) error {
	bp.fenced = true
	to := map[string]map[int32]int64{}
	for _, p := range bp.ps {
		if to[p.Topic] == nil {
			to[p.Topic] = map[int32]int64{}
		}
		to[p.Topic][p.Partition] = p.First
	}
	for _, p := range fe.Behind {
		if to[p.Topic] == nil {
			to[p.Topic] = map[int32]int64{}
		}
		to[p.Topic][p.Partition] = p.Next
	}
	r.log.Warn("the database stands behind the batch (a lossy promotion or a zombie); seeking back", "err", fe)
	backoff := 50 * time.Millisecond
	for {
		err := r.seek(ctx, to)
		if err == nil {
			return nil
		}
		r.log.Warn("seeking back failed, retrying", "err", err)
		select {
		case <-stop.Done():
			return fmt.Errorf("shutdown while seeking back: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// seek sets the client's offsets of partitions to stored positions (-1:
// none, the log start), dropping what it buffered of them.
func (r *Runner) seek(ctx context.Context, to map[string]map[int32]int64) error {
	names := make([]string, 0, len(to))
	for topic := range to {
		names = append(names, topic)
	}
	sort.Strings(names)
	starts, err := kadm.NewClient(r.client).ListStartOffsets(ctx, names...)
	if err != nil {
		return fmt.Errorf("list start offsets: %w", err)
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	var gaps []pipeline.Gap
	for topic, ps := range to {
		set[topic] = map[int32]kgo.EpochOffset{}
		for p, next := range ps {
			start, ok := starts.Lookup(topic, p)
			if !ok {
				return fmt.Errorf("no start offset of %s/%d", topic, p)
			}
			if start.Err != nil {
				return fmt.Errorf("start offset of %s/%d: %w", topic, p, start.Err)
			}
			if next < 0 {
				next = start.Offset
			}
			if next < start.Offset {
				gaps = append(gaps, pipeline.Gap{Group: r.cfg.Group, Topic: topic, Partition: p, Stored: next,
					ResumeAt: start.Offset, From: next, To: start.Offset - 1,
					Reason: fmt.Sprintf("are no longer on the topic (its log starts at %d); the database applied up to %d", start.Offset, next-1)})
				continue
			}
			set[topic][p] = kgo.EpochOffset{Epoch: -1, Offset: next}
		}
	}
	for _, g := range gaps {
		r.log.Error(describeGap(g))
		r.stopOnGap(g)
	}
	r.held.sought(to)
	r.client.SetOffsets(set)
	return nil
}

// revalidate compares the positions the runner holds with the stored ones
// after it followed a new primary, and seeks back every partition the
// database stands behind: one that receives no batch would not meet the
// fence until its next record.
func (r *Runner) revalidate(ctx context.Context) error {
	known := r.held.snapshot() // before the read: stored ones are as far unless lost
	stored, err := pipeline.LoadPositions(ctx, r.pool, r.cfg.Group)
	if err != nil {
		return err
	}
	back := map[string]map[int32]int64{}
	for topic, ps := range known {
		for p, next := range ps {
			s, ok := stored[topic][p]
			if !ok {
				s = -1
			}
			if s < next {
				if back[topic] == nil {
					back[topic] = map[int32]int64{}
				}
				back[topic][p] = s
			}
		}
	}
	if len(back) == 0 {
		return nil
	}
	r.log.Warn("the new primary stands behind the positions this runner stored; seeking back", "positions", back)
	return r.seek(ctx, back)
}

// gaps are the partitions a runner cannot resume.
type gaps struct {
	mu    sync.Mutex
	found []pipeline.Gap
	stop  context.CancelFunc // stops Run; nil before Run
}

// GapError is a runner stopped on partitions whose next records are not
// on the topic.
type GapError struct {
	Gaps []pipeline.Gap
}

func (e *GapError) Error() string {
	parts := make([]string, len(e.Gaps))
	for i, g := range e.Gaps {
		parts[i] = describeGap(g)
	}
	return strings.Join(parts, "; ") + "; restore a newer backup, or start the group with --accept-gap to skip them (audited)"
}

func describeGap(g pipeline.Gap) string {
	return fmt.Sprintf("consumer group %s cannot resume %s partition %d: records %d-%d %s",
		g.Group, g.Topic, g.Partition, g.From, g.To, g.Reason)
}

// Run consumes until ctx is cancelled (see consume), or until an assigned
// partition cannot resume from the stored position: then it returns a
// *GapError.
func (r *Runner) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.gaps.mu.Lock()
	r.gaps.stop = cancel
	found := len(r.gaps.found) > 0
	r.gaps.mu.Unlock()
	if found {
		cancel()
	}
	err := r.consume(ctx)
	r.gaps.mu.Lock()
	defer r.gaps.mu.Unlock()
	if len(r.gaps.found) > 0 {
		return &GapError{Gaps: append([]pipeline.Gap(nil), r.gaps.found...)}
	}
	return err
}

func (r *Runner) stopOnGap(g pipeline.Gap) {
	r.gaps.mu.Lock()
	defer r.gaps.mu.Unlock()
	r.gaps.found = append(r.gaps.found, g)
	if r.gaps.stop != nil {
		r.gaps.stop()
	}
}

// storedOrZero is where a partition resumes by the database: its stored
// position, or 0 when it has none but the group has a Kafka offset there.
// That database never applied the partition's records — it was restored
// to before the group applied any, or is another database — while the
// group did: resuming at the Kafka offset would skip every record before
// it for good, so the partition starts over from its first record (the
// applied ones are answered from processed_commands, re-applied ones
// reproduce their journaled outcome) or, when that is gone, stops on the
// gap like any other. ok is false for a new group (no Kafka offset either).
func storedOrZero(stored map[string]map[int32]int64, topic string, p int32, kafka kgo.Offset) (next int64, ok bool) {
	if next, ok := stored[topic][p]; ok {
		return next, true
	}
	return 0, kafka.EpochOffset().Offset >= 0
}

// adjustOffsets is called by the client when partitions are assigned, with
// the Kafka group offsets: it returns the stored positions instead where
// the group has them. A partition that cannot resume is left out of the
// assignment (nothing of it is read) and stops the runner, unless the gap
// is accepted.
func (r *Runner) adjustOffsets(ctx context.Context, assigned map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	select {
	case <-r.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	stored, err := pipeline.LoadPositions(ctx, r.pool, r.cfg.Group)
	if err != nil {
		return nil, err
	}
	r.held.assign(assigned, stored)
	var names []string
	for topic, ps := range assigned {
		for p := range ps {
			if _, ok := storedOrZero(stored, topic, p, ps[p]); ok {
				names = append(names, topic)
				break
			}
		}
	}
	if len(names) == 0 {
		return assigned, nil
	}
	sort.Strings(names)
	adm := kadm.NewClient(r.client)
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	for topic, ps := range assigned {
		for p := range ps {
			next, ok := storedOrZero(stored, topic, p, ps[p])
			if !ok {
				continue // a new group: from its reset offset, the log start
			}
			start, sok := starts.Lookup(topic, p)
			end, eok := ends.Lookup(topic, p)
			if !sok || !eok || start.Err != nil || end.Err != nil {
				return nil, fmt.Errorf("offsets of %s/%d: %w", topic, p, errors.Join(start.Err, end.Err))
			}
			g := pipeline.Gap{Group: r.cfg.Group, Topic: topic, Partition: p, Stored: next, ResumeAt: start.Offset}
			switch {
			case next < start.Offset:
				g.From, g.To = next, start.Offset-1
				g.Reason = fmt.Sprintf("are no longer on the topic (its log starts at %d); the database applied up to %d", start.Offset, next-1)
			case next > end.Offset:
				g.From, g.To = end.Offset, next-1
				g.Reason = fmt.Sprintf("were applied by the database but the topic ends at %d (the broker lost records or the topic was recreated)", end.Offset)
			default:
				// Kafka's offset behind the stored one, or none (a crash
				// between the commit and the offset commit), redelivers
				// the records between, answered from processed_commands
				// with their replies; ahead of it (a restore) would skip
				// them.
				// A group without a Kafka offset (franz-go hands -2 or
				// -1) would start from its reset offset: the log start.
				if kafka := ps[p].EpochOffset().Offset; kafka < 0 || kafka > next {
					ps[p] = kgo.NewOffset().At(next).WithEpoch(-1)
				}
				continue
			}
			if !r.cfg.AcceptGap {
				r.log.Error(describeGap(g))
				delete(ps, p)
				r.stopOnGap(g)
				continue
			}
			host, _ := os.Hostname()
			if err := pipeline.AcceptGap(ctx, r.pool, g, fmt.Sprintf("--accept-gap (pid %d on %s)", os.Getpid(), host)); err != nil {
				return nil, err
			}
			r.log.Warn("accepted gap: "+describeGap(g), "resumeAt", g.ResumeAt)
			ps[p] = kgo.NewOffset().At(g.ResumeAt).WithEpoch(-1)
		}
	}
	if err := r.loadReplays(ctx, firstOffsets(assigned, stored)); err != nil {
		return nil, fmt.Errorf("load the outcome journal: %w", err)
	}
	return assigned, nil
}
