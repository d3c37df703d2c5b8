package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Gathering (issue 38, item 3).
//
// A poll answers as soon as one record is there. With few clients, each
// waiting for its reply before sending the next command, that splits them
// over many small batches: at 8 clients the fiat applier ran 2.6 commands
// per batch, and every batch costs its two round trips, its commit and WAL
// flush, and a produce of its replies, whatever its size. Config.Gather
// holds a short poll open for the commands that are on their way: only
// while the runner is busy (a batch in flight, or the last poll with
// records less than gatherBusy windows ago), so a lone command on an idle
// runner is applied at once; only while records keep coming (a wait of
// half the window with nothing new ends it); and never longer than the
// window from the first record, nor past MaxBatch records.

// gatherBusy is how many windows after a poll with records the runner
// still counts as busy.
const gatherBusy = 10

// gather extends a poll that returned records, as described above.
func (r *Runner) gather(ctx context.Context, fetches kgo.Fetches, inflight *round) kgo.Fetches {
	window := r.cfg.Gather
	n := fetches.NumRecords()
	if window <= 0 || n == 0 {
		return fetches
	}
	start := time.Now()
	busy := inflight != nil || start.Sub(r.lastRecords) < gatherBusy*window
	defer func() { r.lastRecords = time.Now() }()
	if !busy {
		return fetches
	}
	deadline := start.Add(window)
	for n < r.cfg.MaxBatch && ctx.Err() == nil && !r.rebalanceWanted.Load() {
		wait := min(window/2, time.Until(deadline))
		if wait <= 0 {
			break
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		more := stampFetched(r.client.PollRecords(wctx, r.cfg.MaxBatch-n))
		cancel()
		got := more.NumRecords()
		fetches = append(fetches, withoutWaitEnd(more, wctx)...)
		if got == 0 {
			break
		}
		n += got
	}
	r.metrics.Gathered.WithLabelValues(r.cfg.Group).Observe(time.Since(start).Seconds())
	return fetches
}

// withoutWaitEnd drops the error fetch a poll returns when its own wait
// ended: that is the end of the window, not a fetch error.
func withoutWaitEnd(fs kgo.Fetches, wctx context.Context) kgo.Fetches {
	out := fs[:0]
	for _, f := range fs {
		if len(f.Topics) == 1 && f.Topics[0].Topic == "" && len(f.Topics[0].Partitions) == 1 {
			p := f.Topics[0].Partitions[0]
			if p.Partition == -1 && p.Err != nil && errors.Is(p.Err, wctx.Err()) {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
