package pipeline

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consume consumes until ctx is cancelled. A batch in progress when ctx is
// cancelled is finished and its offsets committed before Run returns; the
// client then leaves the group.
//
// While one poll's batches commit, Run may read the next poll and start
// applying it (Config.Overlap, order.go); it marks a poll's offsets only
// after the one before it. It allows a rebalance only with nothing in
// flight.
func (r *Runner) consume(ctx context.Context) error {
	defer r.client.Close()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := r.client.CommitMarkedOffsets(cctx); err != nil {
			r.log.Warn("final offset commit failed; the last batch will be redelivered and deduplicated", "err", err)
		}
	}()
	var inflight *round
	defer func() {
		// Stopping on an error: a batch still in flight ends before the
		// client closes, its offsets not marked (it is redelivered).
		if inflight != nil {
			<-inflight.done
		}
	}()
	for {
		fetches := stampFetched(r.poll(ctx, inflight))
		fetches = r.gather(ctx, fetches, inflight)
		if fetches.IsClientClosed() {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				r.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
			}
		})
		var next *round
		if recs := r.takeCarry(fetches.Records()); len(recs) > 0 {
			// The batch is finished even when shutdown starts meanwhile, so
			// that its offsets are committed and nothing is redelivered.
			next = r.start(context.WithoutCancel(ctx), ctx, recs)
		}
		prev := inflight
		inflight = next
		if prev != nil {
			if err := r.finish(prev); err != nil {
				r.client.AllowRebalance()
				return err
			}
		}
		r.recordLag(fetches)
		overlap := ctx.Err() == nil && !r.rebalanceWanted.Swap(false) && r.overlapNext()
		if inflight != nil && (overlap || r.overlapAfterCommit(ctx, inflight)) {
			continue
		}
		if inflight != nil {
			err := r.finish(inflight)
			inflight = nil
			if err != nil {
				r.client.AllowRebalance()
				return err
			}
		}
		r.client.AllowRebalance()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// overlapNext reports whether to read the next poll while the one in
// flight commits.
func (r *Runner) overlapNext() bool {
	if r.reproducing() {
		return false
	}
	switch r.cfg.Overlap {
	case OverlapAlways:
		return true
	case OverlapNever:
		return false
	default:
		return r.client.BufferedFetchRecords() > 0
	}
}

// overlapAfterCommit reports, for a poll in flight that does not overlap
// the next one now, whether to read the next poll once its batches have
// committed and produced their journal entries (turn.journaling), instead
// of after their replies: the broker's acknowledgement of the journal (an
// fsync on the embedded broker) then no longer holds up the next batch,
// which starts its transaction after this one's COMMIT returned, not
// during it as OverlapAlways does, so it closes no earlier than it would
// have. Only with OverlapBacklog, and not while re-applying, nor when a
// rebalance waits.
func (r *Runner) overlapAfterCommit(ctx context.Context, inflight *round) bool {
	if r.cfg.Overlap != OverlapBacklog || ctx.Err() != nil || r.reproducing() {
		return false
	}
	select {
	case <-inflight.journaling:
		// A batch that re-applied commands still has its replays pending
		// here (they are dropped after its journal is acknowledged).
		return !r.rebalanceWanted.Load() && !r.reproducing()
	case <-inflight.done:
		return false // finished (or ended without journaling): poll as usual
	case <-r.rebalance:
		r.rebalanceWanted.Store(true)
		return false
	case <-ctx.Done():
		return false
	}
}

// poll reads the next records. With a poll in flight it first waits until
// that poll's transactions have sent their COMMIT (so the next batch holds
// what arrived meanwhile), and it returns nothing once that poll is done or
// a rebalance waits, so that Run can mark it and allow the rebalance.
func (r *Runner) poll(ctx context.Context, inflight *round) kgo.Fetches {
	if inflight == nil {
		if r.holding() {
			// Records held back are tried again after a pause, whatever
			// arrives meanwhile (reproduce.go).
			pctx, cancel := context.WithCancel(ctx)
			defer cancel()
			stop := time.AfterFunc(holdRetry, cancel)
			defer stop.Stop()
			return r.client.PollRecords(pctx, r.cfg.MaxBatch)
		}
		return r.client.PollRecords(ctx, r.cfg.MaxBatch)
	}
	select {
	case <-inflight.committing:
	case <-inflight.done:
		return nil
	case <-r.rebalance:
		r.rebalanceWanted.Store(true)
		return nil
	case <-ctx.Done():
		return nil
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-inflight.done:
		case <-r.rebalance:
			r.rebalanceWanted.Store(true)
		case <-pctx.Done():
		}
		cancel()
	}()
	return r.client.PollRecords(pctx, r.cfg.MaxBatch)
}

func (r *Runner) recordLag(fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		last := p.Records[len(p.Records)-1].Offset
		r.metrics.Lag.WithLabelValues(r.cfg.Group, p.Topic, strconv.Itoa(int(p.Partition))).
			Set(float64(p.HighWatermark - last - 1))
	})
}

// fetchedKey is the key of a polled record's Context value: when its poll
// returned, in Unix nanoseconds (Command.Fetched).
type fetchedKey struct{}

// stampFetched notes on each record of fs when its poll returned: one
// context per poll, set on records that have none (franz-go leaves a
// consumed record's Context to the consumer).
func stampFetched(fs kgo.Fetches) kgo.Fetches {
	if fs.NumRecords() == 0 {
		return fs
	}
	at := context.WithValue(context.Background(), fetchedKey{}, time.Now().UnixNano())
	fs.EachRecord(func(rec *kgo.Record) {
		if rec.Context == nil {
			rec.Context = at
		}
	})
	return fs
}

// fetchedAt is when rec's poll returned; 0 when not noted.
func fetchedAt(rec *kgo.Record) int64 {
	if rec.Context == nil {
		return 0
	}
	at, _ := rec.Context.Value(fetchedKey{}).(int64)
	return at
}
