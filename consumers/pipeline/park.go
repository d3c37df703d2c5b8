package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/topics"
	"github.com/fintech/platform/topics/dlq"
)

// expand unpacks the bundles among recs (topics.ExpandChecked) and returns
// the DLQ records of what did not read in them: a bundle whose event list
// does not decode, or an event in one without an id, type and key, is
// parked for an operator rather than lost without a trace.
func (r *Runner) expand(recs []*kgo.Record) ([]*kgo.Record, []*kgo.Record) {
	out, bad := topics.ExpandChecked(recs)
	var parked []*kgo.Record
	for _, u := range bad {
		r.log.Warn("parking unreadable bundled record", "topic", u.Rec.Topic, "partition", u.Rec.Partition,
			"offset", u.Rec.Offset, "err", u.Err)
		parked = append(parked, dlqRecord(u.Rec, u.Err))
	}
	return out, parked
}

func dlqRecord(rec *kgo.Record, cause error) *kgo.Record {
	return dlq.Park(rec, cause)
}

func dlqEnvelope(c Command, cause error) *kgo.Record {
	return dlq.ParkEnvelope(c.Topic, c.Env, cause)
}

// produceUntilDone publishes DLQ records (and journal entries,
// journal.go), retrying until the broker has them: the offsets of a parked
// record are committed only after it is on the DLQ.
func (r *Runner) produceUntilDone(ctx, stop context.Context, recs []*kgo.Record) error {
	if len(recs) == 0 {
		return nil
	}
	for {
		err := r.client.ProduceSync(ctx, recs...).FirstErr()
		if err == nil {
			return nil
		}
		r.log.Warn("producing to "+recs[0].Topic+" failed, retrying", "err", err)
		select {
		case <-stop.Done():
			return fmt.Errorf("shutdown while parking records: %w", err)
		case <-time.After(time.Second):
		}
	}
}
