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
// there when the Kafka group offset is ahead of it. The Kafka offset is
// still committed after each batch, for tools and lag, but it can be ahead
// of the database: after a restore to an earlier point it is, and starting
// from it would skip every command the restored database has not applied.
// A Kafka offset behind the stored one (a crash after the commit, before
// the offset commit) is kept: the records between are redelivered and
// answered from processed_commands, so their waiting requests get replies.
//
// The upsert rides in a round trip the batch sends anyway (the lookup of a
// plain handler, the writes of a Pipelined one): one statement more, no
// round trip more. A batch that parks a record on the DLQ, or that is split
// to isolate a failing command, stores its positions on its own after the
// parked records are on the DLQ, so that a crash in between redelivers them
// (the applied ones are answered from processed_commands).
//
// When the records from a stored position are no longer on the topic
// (trimmed, past retention), or the topic ends before it (the broker lost
// records), the group stops with one line naming the topic, the partition
// and the missing range. Config.AcceptGap resumes at the first record the
// partition still has, recording the gap in consumer_gap_accepts.

// batchPositions are the positions one batch moves its partitions to.
type batchPositions struct {
	ps    []pipeline.Position
	saved bool // a committed transaction of the batch stored them
}

// positionsOf returns the offset after the last record of each partition.
func positionsOf(recs []*kgo.Record) *batchPositions {
	type tp struct {
		topic string
		part  int32
	}
	next := map[tp]int64{}
	var order []tp
	for _, rec := range recs {
		k := tp{rec.Topic, rec.Partition}
		if _, ok := next[k]; !ok {
			order = append(order, k)
		}
		next[k] = max(next[k], rec.Offset+1)
	}
	bp := &batchPositions{ps: make([]pipeline.Position, 0, len(order))}
	for _, k := range order {
		bp.ps = append(bp.ps, pipeline.Position{Topic: k.topic, Partition: k.part, Next: next[k]})
	}
	return bp
}

// queuePositions puts the batch's positions, when this transaction carries
// them, on a round trip of the transaction.
func (r *Runner) queuePositions(b *pgx.Batch, at place) {
	if at.pos != nil {
		pipeline.QueueSavePositions(b, r.cfg.Group, at.pos.ps)
	}
}

// positionsCommitted records that the transaction carrying the positions
// committed.
func positionsCommitted(at place) {
	if at.pos != nil {
		at.pos.saved = true
	}
}

// savePositions stores the positions of a batch whose transaction did not
// carry them, retrying until Postgres has them.
func (r *Runner) savePositions(ctx, stop context.Context, bp *batchPositions) error {
	if bp == nil || bp.saved {
		return nil
	}
	backoff := 50 * time.Millisecond
	for {
		err := pipeline.SavePositions(ctx, r.pool, r.cfg.Group, bp.ps)
		if err == nil {
			bp.saved = true
			return nil
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
	var names []string
	for topic, ps := range assigned {
		for p := range ps {
			if _, ok := stored[topic][p]; ok {
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
			next, ok := stored[topic][p]
			if !ok {
				continue // never stored here: the Kafka offset
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
				if kafka := ps[p].EpochOffset().Offset; kafka > next {
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
	return assigned, nil
}
