package pipeline

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// round is one poll being applied by its workers.
type round struct {
	recs       []*kgo.Record
	committing chan struct{} // every batch of the poll sent its COMMIT, or ended
	journaling chan struct{} // every batch of the poll committed and produced its journal entries (never closed when one ended otherwise)
	done       chan struct{} // every batch of the poll is finished
	errs       []error
	fenced     []*batchPositions // batches of the poll refused by the fence (position.go)
	carry      [][]*kgo.Record   // held back, by worker (reproduce.go)
}

// start applies one poll, split over the workers by partition, each batch
// after the same worker's batch of the poll before (which may still be
// committing).
func (r *Runner) start(ctx, stop context.Context, recs []*kgo.Record) *round {
	groups := make([][]*kgo.Record, r.cfg.Workers)
	if r.cfg.Workers == 1 {
		groups[0] = recs
	} else {
		for _, rec := range recs {
			w := partitionWorker(rec.Topic, rec.Partition, r.cfg.Workers)
			groups[w] = append(groups[w], rec)
		}
	}
	rd := &round{recs: recs, committing: make(chan struct{}), journaling: make(chan struct{}), done: make(chan struct{}), errs: make([]error, len(groups)),
		carry: make([][]*kgo.Record, len(groups))}
	var turns []*turn
	var wg sync.WaitGroup
	fenced := make([]*batchPositions, len(groups))
	for w, g := range groups {
		if len(g) == 0 {
			continue
		}
		at := place{lock: r.locks[w], before: r.last[w], own: newTurn()}
		if at.before != nil {
			select {
			case <-at.before.done:
				at.before = nil
			default:
				r.metrics.Overlapped.WithLabelValues(r.cfg.Group).Inc()
			}
		}
		r.last[w] = at.own
		turns = append(turns, at.own)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.carry[w], rd.errs[w] = r.processGroup(ctx, stop, g, at, &fenced[w])
		}()
	}
	go func() {
		for _, t := range turns {
			<-t.committing
		}
		close(rd.committing)
		for _, t := range turns {
			select {
			case <-t.journaling:
			case <-t.done:
				return // fenced, failed or held: the poll ends before the next is read
			}
		}
		close(rd.journaling)
	}()
	go func() {
		wg.Wait()
		for _, bp := range fenced {
			if bp != nil && bp.fenced {
				rd.fenced = append(rd.fenced, bp)
			}
		}
		close(rd.done)
	}()
	return rd
}

// finish waits for a poll to be applied and marks its offsets. It returns
// an error only when the runner must stop without committing offsets
// (shutdown during a retry loop, or the AfterDBCommit hook).
func (r *Runner) finish(rd *round) error {
	<-rd.done
	if err := errors.Join(rd.errs...); err != nil {
		return err
	}
	var held []*kgo.Record
	for _, c := range rd.carry {
		held = append(held, c...)
	}
	if len(rd.fenced) == 0 && len(held) == 0 {
		r.client.MarkCommitRecords(rd.recs...)
		return nil
	}
	// The records of fenced partitions come again, and those held back are
	// applied again first (reproduce.go): their offsets are not marked.
	r.setCarry(held)
	isHeld := make(map[*kgo.Record]bool, len(held))
	for _, rec := range held {
		isHeld[rec] = true
	}
	type tp struct {
		topic string
		part  int32
	}
	skip := map[tp]bool{}
	for _, bp := range rd.fenced {
		for _, p := range bp.ps {
			skip[tp{p.Topic, p.Partition}] = true
		}
	}
	for _, rec := range rd.recs {
		if !skip[tp{rec.Topic, rec.Partition}] && !isHeld[rec] {
			r.client.MarkCommitRecords(rec)
		}
	}
	return nil
}

// partitionWorker maps a topic partition to a worker, always the same one.
func partitionWorker(topic string, partition int32, workers int) int {
	h := uint32(partition)
	for i := 0; i < len(topic); i++ {
		h = h*31 + uint32(topic[i])
	}
	return int(h % uint32(workers))
}

// processGroup applies records of a fixed set of partitions in one
// transaction (split only to isolate a failing command). It leaves the
// batch's positions in *pos, to tell finish when the fence refused them,
// and returns the records it held back (reproduce.go).
func (r *Runner) processGroup(ctx, stop context.Context, recs []*kgo.Record, at place, pos **batchPositions) (carry []*kgo.Record, err error) {
	defer func() { at.own.finish(err != nil) }()
	start := time.Now()
	var committed int64
	cmds := make([]Command, 0, len(recs))
	expanded, parked := r.expand(recs)
	var refused []*kgo.Record
	for _, rec := range expanded {
		env, err := schemas.Decode(rec.Value)
		if err != nil {
			r.log.Warn("parking unreadable record", "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", err)
			parked = append(parked, dlqRecord(rec, err))
			continue
		}
		if field, bad := schemas.BadText(rec.Value); bad {
			// Refused on its own, before the batch's transaction: Postgres would
			// fail the whole batch on it. The answer is deterministic, so a
			// redelivery gets the same one without a stored row.
			r.metrics.Applied.WithLabelValues(r.cfg.Group, "refused").Inc()
			if env.ReplyTo != "" {
				rep, err := replyRecord(env, topics.TraceOf(rec), schemas.Reply{CommandID: env.ID, Status: 422,
					Body: schemas.ErrorJSON(schemas.CodeValidationFailed, "the command carries NUL characters or invalid UTF-8",
						map[string]any{"fields": map[string]string{field: "must be valid UTF-8 text without NUL characters"}})})
				if err != nil {
					return nil, err
				}
				refused = append(refused, rep)
			}
			continue
		}
		cmds = append(cmds, Command{Env: env, Topic: rec.Topic, Trace: topics.TraceOf(rec), Partition: rec.Partition,
			Offset: rec.Offset, Recorded: r.replays.get(rec.Topic, rec.Partition, env.ID), Fetched: fetchedAt(rec)})
	}

	ctx, span := r.startBatchSpan(ctx, cmds)
	defer span.End()
	positions, upfront := r.positionsOf(recs), len(parked)
	*pos = positions
	// What did not read is on the DLQ before the transaction that stores
	// the positions past it commits (a crash in between parks it twice):
	// so every batch's transaction carries its positions, and the fence of
	// the batch after it sees them.
	if err := r.produceUntilDone(ctx, stop, parked); err != nil {
		return nil, err
	}
	at.pos = positions
	replies := refused
	if len(cmds) > 0 {
		applied, stillParked, err := r.applyWithRetry(ctx, stop, cmds, parked, at)
		if err != nil {
			return nil, err
		}
		if positions.fenced {
			return nil, nil // sought back: the records come again (position.go)
		}
		committed = time.Now().UnixNano()
		replies, parked = append(replies, applied...), stillParked
		r.logApplied(ctx, cmds)
		if reapplies(cmds) {
			held := heldFrom(cmds)
			r.noteHolds(cmds)
			holdPositions(positions.ps, held)
			carry = carried(recs, held)
		}
		if r.cfg.AfterDBCommit != nil {
			if err := r.cfg.AfterDBCommit(ctx); err != nil {
				return nil, err
			}
		}
	}
	if err := r.produceUntilDone(ctx, stop, parked[upfront:]); err != nil {
		return nil, err
	}
	if err := r.savePositions(ctx, stop, positions); err != nil || positions.fenced {
		return nil, err
	}
	// The outcomes go on their journal before any reply leaves: every
	// answer a client gets is on it (journal.go).
	journal := replies[:0:0]
	sent := replies[:0]
	for _, rep := range replies {
		if isJournal(rep) {
			journal = append(journal, rep)
		} else {
			sent = append(sent, rep)
		}
	}
	if err := r.produceJournal(ctx, stop, journal, at.own); err != nil {
		return nil, err
	}
	replies = sent
	r.replays.done(cmds)
	for _, p := range parked {
		r.metrics.DLQ.WithLabelValues(r.cfg.Group, p.Topic).Inc()
	}
	// The batch is counted before its replies leave, so that whoever got a
	// reply finds its batch in the metrics.
	r.metrics.BatchSize.WithLabelValues(r.cfg.Group).Observe(float64(len(recs)))
	r.metrics.ApplySecs.WithLabelValues(r.cfg.Group).Observe(time.Since(start).Seconds())
	// Replies are sent without waiting: a lost reply only makes the waiting
	// request time out, and its retry gets the stored result.
	replied := time.Now().UnixNano()
	for _, rep := range replies {
		if committed != 0 && len(rep.Headers) > 0 && rep.Headers[len(rep.Headers)-1].Key == topics.HopsHeader {
			topics.StampHops(rep, start.UnixNano(), committed, replied)
		}
		r.client.Produce(ctx, rep, r.onReplySent)
	}
	return carry, nil
}

// startBatchSpan starts the span of one batch: in the trace of its first
// sampled command (else its first traced one), linked to the traces of the
// others, so that a sampled request's trace shows the batch that applied
// it and, under it, the batch's Postgres statements (the pool's tracer
// makes them children of ctx's span).
func (r *Runner) startBatchSpan(ctx context.Context, cmds []Command) (context.Context, trace.Span) {
	parent := -1
	for i, c := range cmds {
		if c.Trace.IsValid() && (parent < 0 || c.Trace.IsSampled() && !cmds[parent].Trace.IsSampled()) {
			parent = i
		}
	}
	var links []trace.Link
	if parent >= 0 {
		ctx = trace.ContextWithRemoteSpanContext(ctx, cmds[parent].Trace)
		for i, c := range cmds {
			if i != parent && c.Trace.IsValid() {
				links = append(links, trace.Link{SpanContext: c.Trace})
			}
		}
	}
	return r.cfg.Tracer.Start(ctx, r.cfg.Group+" apply", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("messaging.batch.message_count", len(cmds))))
}

// logApplied logs each applied command at debug level, in its own trace
// (the log handler adds its traceId).
func (r *Runner) logApplied(ctx context.Context, cmds []Command) {
	if !r.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	for _, c := range cmds {
		r.log.LogAttrs(trace.ContextWithRemoteSpanContext(ctx, c.Trace), slog.LevelDebug, "command applied",
			slog.String("type", c.Env.Type), slog.String("id", c.Env.ID), slog.String("topic", c.Topic))
	}
}

func (r *Runner) onReplySent(_ *kgo.Record, err error) {
	if err != nil {
		r.log.Warn("sending a reply failed; the request will time out and its retry gets the stored result", "err", err)
	}
}

// produceJournal produces a batch's journal entries and waits until the
// broker acknowledged them all, retrying those that failed
// (produceUntilDone). Once every entry is handed to the client it tells
// the runner (own.journal) that the next batch may start: its entries are
// produced after these, so each partition's entries keep the order of the
// batches, and its replies wait for its own entries as these do.
func (r *Runner) produceJournal(ctx, stop context.Context, recs []*kgo.Record, own *turn) error {
	if len(recs) == 0 {
		own.journal()
		return nil
	}
	type result struct {
		rec *kgo.Record
		err error
	}
	acked := make(chan result, len(recs))
	for _, rec := range recs {
		r.client.Produce(ctx, rec, func(rec *kgo.Record, err error) { acked <- result{rec, err} })
	}
	own.journal()
	var failed []*kgo.Record
	var first error
	for range recs {
		res := <-acked
		if res.err != nil {
			failed, first = append(failed, res.rec), cmp.Or(first, res.err)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	r.log.Warn("producing to "+failed[0].Topic+" failed, retrying", "err", first)
	return r.produceUntilDone(ctx, stop, failed)
}
