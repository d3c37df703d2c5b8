package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// The outcome journal.
//
// An outcome is a fact: a command answered once is never decided again.
// Postgres alone cannot keep that promise across a restore to an earlier
// point, which loses the rows of the commands applied since; the command
// topics still hold them, and re-applied in another order (each partition's
// backlog as a block) or at another time (the month of a cap), they would
// decide otherwise. So every applied command's outcome is also journaled on
// Kafka (topics.OutcomesOf its topic, the partition number of its record):
// after the batch's Postgres commit and before its replies, produced
// synchronously, so that every answer a client was given is on the journal.
//
// When partitions are assigned (adjustOffsets), the journal entries of the
// commands from each partition's first offset on are loaded: a database
// that applied those commands has positions past them, so only a restored
// (or otherwise lossy) database finds any. Each re-applied command carries
// its entry (Command.Recorded) and reproduces it (reproduce.go).

// Recorded is the outcome a command was given the first time.
type Recorded struct {
	Status int
	Body   []byte
	// At is the clock it was decided with; zero when unknown.
	At time.Time
	// Emit are the events of a rejection, emitted again with it (a
	// success's are decided again).
	Emit []Emission
	// held is set while a batch holds the command back, now to what it
	// decided then (reproduce.go).
	held bool
	now  Outcome
	// writes is set for a rejection whose status the handler says changed
	// something (RejectionWriter): it is decided again like a success.
	writes bool
}

// success reports whether the command changed something the first time:
// a 4xx or 5xx answer changes nothing, unless the handler says a rejection
// of its status writes (a declined mask charge is a row).
func (r *Recorded) success() bool { return r.Status < 400 || r.writes }

// Clock returns the clock to decide c with: the one of its first
// application when it is re-applied (its occurredAt when the journal does
// not say), else now. Every time-dependent input (caps, day and month
// windows, createdAt) reads it.
func (c Command) Clock(now time.Time) time.Time {
	switch {
	case c.Recorded == nil:
		return now
	case !c.Recorded.At.IsZero():
		return c.Recorded.At
	case !c.Env.OccurredAt.IsZero():
		return c.Env.OccurredAt
	}
	return now
}

type partitionKey struct {
	topic string
	part  int32
}

// replays are the journal entries of the commands a runner will re-apply,
// by partition and command id.
type replays struct {
	mu   sync.Mutex
	byTP map[partitionKey]map[string]*Recorded
}

func (rs *replays) get(topic string, part int32, id string) *Recorded {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.byTP[partitionKey{topic, part}][id]
}

// pending reports whether any entry waits for its command.
func (rs *replays) pending() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.byTP) > 0
}

// done drops the entries of the commands a committed batch re-applied.
func (rs *replays) done(cmds []Command) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, c := range cmds {
		if c.Recorded == nil || c.Recorded.held {
			continue
		}
		k := partitionKey{c.Topic, c.Partition}
		delete(rs.byTP[k], c.Env.ID)
		if len(rs.byTP[k]) == 0 {
			delete(rs.byTP, k)
		}
	}
}

// set replaces the entries of the partitions in loaded (an assignment).
func (rs *replays) set(loaded map[partitionKey]map[string]*Recorded) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byTP == nil {
		rs.byTP = map[partitionKey]map[string]*Recorded{}
	}
	for k, m := range loaded {
		if len(m) == 0 {
			delete(rs.byTP, k)
			continue
		}
		rs.byTP[k] = m
	}
}

// drop forgets the partitions a runner no longer owns.
func (rs *replays) drop(lost map[string][]int32) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for topic, ps := range lost {
		for _, p := range ps {
			delete(rs.byTP, partitionKey{topic, p})
		}
	}
}

// journalRecord is the journal entry of a command decided for the first
// time, or nil when its topic keeps no journal. A rejection's entry keeps
// the events it emitted.
func journalRecord(c Command, o schemas.Reply, at time.Time, emit []Emission) (*kgo.Record, error) {
	journal, ok := topics.OutcomesOf(c.Topic)
	if !ok {
		return nil, nil
	}
	entry := schemas.CommandOutcome{CommandID: c.Env.ID, Topic: c.Topic, Partition: c.Partition, Offset: c.Offset,
		Status: o.Status, Body: o.Body, DecidedAt: at}
	if o.Status >= 400 {
		for _, e := range emit {
			entry.Events = append(entry.Events, schemas.OutcomeEvent{Topic: e.Topic, Event: e.Env})
		}
	}
	env, err := schemas.New(schemas.TypeCommandOutcome, c.Env.Key, c.Env.ActorUserID, entry, time.Now())
	if err != nil {
		return nil, err
	}
	rec, err := topics.Record(journal, env)
	if err != nil {
		return nil, err
	}
	rec.Partition = c.Partition
	return rec, nil
}

// isJournal reports whether rec is a journal entry (produced before the
// replies, and synchronously).
func isJournal(rec *kgo.Record) bool {
	return rec.Topic == topics.FiatOutcomes || rec.Topic == topics.MaskOutcomes || rec.Topic == topics.TradeOutcomes
}

// journalPartitioner puts a journal entry on its command's partition
// number and every other record where the client's default partitioner
// does.
type journalPartitioner struct{ manual, other kgo.Partitioner }

func newJournalPartitioner() kgo.Partitioner {
	return journalPartitioner{manual: kgo.ManualPartitioner(), other: kgo.UniformBytesPartitioner(64<<10, true, true, nil)}
}

func (p journalPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if isJournal(&kgo.Record{Topic: topic}) {
		return p.manual.ForTopic(topic)
	}
	return p.other.ForTopic(topic)
}

// journalSkew is how much earlier than a command record's timestamp the
// search for its journal entry starts (clocks of brokers and producers).
const journalSkew = time.Minute

// loadReplays loads the journal entries of the commands at or after from
// (command topic -> partition -> first offset the runner reads) and keeps
// them for the batches that re-apply those commands.
func (r *Runner) loadReplays(ctx context.Context, from map[string]map[int32]int64) error {
	want := map[string]map[int32]int64{} // command partitions with records from there on
	var cmdTopics []string
	for topic, ps := range from {
		if _, ok := topics.OutcomesOf(topic); ok && len(ps) > 0 {
			cmdTopics = append(cmdTopics, topic)
		}
	}
	if len(cmdTopics) == 0 {
		return nil
	}
	adm := kadm.NewClient(r.client)
	ends, err := adm.ListEndOffsets(ctx, cmdTopics...)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	loaded := map[partitionKey]map[string]*Recorded{}
	for _, topic := range cmdTopics {
		for p, off := range from[topic] {
			loaded[partitionKey{topic, p}] = nil // forget what an earlier assignment loaded
			if e, ok := ends.Lookup(topic, p); ok && e.Err == nil && off < e.Offset {
				if want[topic] == nil {
					want[topic] = map[int32]int64{}
				}
				want[topic][p] = off
			}
		}
	}
	if len(want) > 0 {
		// The first record to read of each partition dates the search.
		oldest := int64(-1)
		if err := r.readPartitions(ctx, want, plusOne(want), func(rec *kgo.Record) {
			if ms := rec.Timestamp.UnixMilli(); oldest < 0 || ms < oldest {
				oldest = ms
			}
		}); err != nil {
			return fmt.Errorf("read the first records to re-apply: %w", err)
		}
		if err := r.readJournal(ctx, want, oldest-journalSkew.Milliseconds(), loaded); err != nil {
			return err
		}
	}
	n := 0
	for _, m := range loaded {
		n += len(m)
	}
	if n > 0 {
		r.log.Warn("re-applying commands with the outcomes on their journal (the database was behind them: a restore, or the partitions' previous owner committed its last batch after their positions were read)",
			"commands", n)
	}
	r.replays.set(loaded)
	return nil
}

func plusOne(m map[string]map[int32]int64) map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	for t, ps := range m {
		out[t] = map[int32]int64{}
		for p, o := range ps {
			out[t][p] = o + 1
		}
	}
	return out
}

// readJournal reads the journal entries of the commands at or after want,
// written since the millisecond since, into loaded.
func (r *Runner) readJournal(ctx context.Context, want map[string]map[int32]int64, since int64, loaded map[partitionKey]map[string]*Recorded) error {
	adm := kadm.NewClient(r.client)
	start, until := map[string]map[int32]int64{}, map[string]map[int32]int64{}
	for topic, ps := range want {
		journal, _ := topics.OutcomesOf(topic)
		at, err := adm.ListOffsetsAfterMilli(ctx, max(since, 0), journal)
		if err != nil {
			return fmt.Errorf("find the journal entries of %s: %w", topic, err)
		}
		ends, err := adm.ListEndOffsets(ctx, journal)
		if err != nil {
			return fmt.Errorf("list end offsets of %s: %w", journal, err)
		}
		for p := range ps {
			s, sok := at.Lookup(journal, p)
			e, eok := ends.Lookup(journal, p)
			if !sok || !eok || s.Err != nil || e.Err != nil || s.Offset < 0 || s.Offset >= e.Offset {
				continue
			}
			if start[journal] == nil {
				start[journal], until[journal] = map[int32]int64{}, map[int32]int64{}
			}
			start[journal][p], until[journal][p] = s.Offset, e.Offset
		}
	}
	var bad error
	err := r.readPartitions(ctx, start, until, func(rec *kgo.Record) {
		env, err := schemas.Decode(rec.Value)
		if err != nil {
			bad = fmt.Errorf("journal %s/%d offset %d: %w", rec.Topic, rec.Partition, rec.Offset, err)
			return
		}
		o, err := schemas.DataAs[schemas.CommandOutcome](env)
		if err != nil {
			bad = fmt.Errorf("journal %s/%d offset %d: %w", rec.Topic, rec.Partition, rec.Offset, err)
			return
		}
		first, ok := want[o.Topic][o.Partition]
		if !ok || o.Offset < first {
			return
		}
		k := partitionKey{o.Topic, o.Partition}
		if loaded[k] == nil {
			loaded[k] = map[string]*Recorded{}
		}
		if _, dup := loaded[k][o.CommandID]; !dup { // the first outcome is the fact
			rec := &Recorded{Status: o.Status, Body: o.Body, At: o.DecidedAt}
			if w, ok := r.handler.(RejectionWriter); ok && o.Status >= 400 {
				rec.writes = w.WritesRejection(o.Status)
			}
			for _, e := range o.Events {
				rec.Emit = append(rec.Emit, Emission{Topic: e.Topic, Env: e.Event})
			}
			loaded[k][o.CommandID] = rec
		}
	})
	if err != nil {
		return fmt.Errorf("read the outcome journal: %w", err)
	}
	return bad
}

// readPartitions reads each partition of start from its offset up to (not
// including) its offset in until, with a client of its own.
func (r *Runner) readPartitions(ctx context.Context, start, until map[string]map[int32]int64, each func(*kgo.Record)) error {
	offsets := map[string]map[int32]kgo.Offset{}
	left := 0
	for t, ps := range start {
		offsets[t] = map[int32]kgo.Offset{}
		for p, o := range ps {
			offsets[t][p] = kgo.NewOffset().At(o)
			left++
		}
	}
	if left == 0 {
		return nil
	}
	cl, err := topics.NewClient(r.cfg.Brokers, kgo.ConsumePartitions(offsets))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	reached := map[partitionKey]bool{}
	for left > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, fe := range fetches.Errors() {
			return fmt.Errorf("%s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			k := partitionKey{rec.Topic, rec.Partition}
			end := until[rec.Topic][rec.Partition]
			if reached[k] {
				return
			}
			if rec.Offset < end {
				each(rec)
			}
			if rec.Offset+1 >= end {
				reached[k] = true
				left--
			}
		})
	}
	return nil
}

// firstOffsets are the offsets an assignment reads first: the ones set, or
// the stored position where the client was left to choose.
func firstOffsets(assigned map[string]map[int32]kgo.Offset, stored map[string]map[int32]int64) map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	for topic, ps := range assigned {
		for p, o := range ps {
			off := o.EpochOffset().Offset
			if off < 0 {
				s, ok := stored[topic][p]
				if !ok {
					continue
				}
				off = s
			}
			if out[topic] == nil {
				out[topic] = map[int32]int64{}
			}
			out[topic][p] = off
		}
	}
	return out
}
