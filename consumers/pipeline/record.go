package pipeline

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/topics"
)

// sorted is a batch split into the commands applied before (answered from
// their stored result), the repeats of an id inside the batch, and the
// fresh commands to apply.
type sorted struct {
	cmds     []Command
	results  []schemas.Reply
	dupOf    map[int]int // a repeated id inside the batch -> its first index
	fresh    []Command
	freshIdx []int
	// reproduced are the re-applied commands whose recorded rejection is
	// answered without deciding them again (reproduce.go), by index; again
	// those answered from their stored result.
	reproduced []int
	again      []int
	// decidedAt and emitted are the clocks and emissions of the fresh
	// commands' decisions; held are the partitions held back from an
	// offset on.
	decidedAt []time.Time
	emitted   [][]Emission
	held      map[partitionKey]int64
}

func sortOut(cmds []Command, seen map[string]pipeline.Processed) *sorted {
	s := &sorted{cmds: cmds, results: make([]schemas.Reply, len(cmds)), dupOf: make(map[int]int)}
	first := make(map[string]int, len(cmds))
	for i, c := range cmds {
		if c.Recorded != nil {
			c.Recorded.held = false
		}
		if p, ok := seen[c.Env.ID]; ok {
			s.results[i] = storedReply(c.Env, p.RequestHash, p.Status, p.Body)
			if p.RequestHash == c.Env.RequestHash && c.Recorded == nil {
				s.again = append(s.again, i)
			}
			continue
		}
		if j, ok := first[c.Env.ID]; ok {
			s.dupOf[i] = j
			continue
		}
		first[c.Env.ID] = i
		if c.Recorded != nil && !c.Recorded.success() {
			s.reproduced = append(s.reproduced, i)
			continue
		}
		s.fresh = append(s.fresh, c)
		s.freshIdx = append(s.freshIdx, i)
	}
	return s
}

// record takes the outcomes of the fresh commands: their results, their
// processed rows and their event log rows. The events emitted to a bundled
// topic are written as few bundle rows after the others.
func (s *sorted) record(outcomes []Outcome, bundled map[string]bool) ([]pipeline.Processed, []pipeline.OutboxRow, error) {
	if len(outcomes) != len(s.fresh) {
		return nil, nil, fmt.Errorf("handler returned %d outcomes for %d commands", len(outcomes), len(s.fresh))
	}
	processed := make([]pipeline.Processed, 0, len(s.fresh)+len(s.reproduced))
	var outbox []pipeline.OutboxRow
	var toBundle map[string][]schemas.Envelope
	var bundleOrder []string
	// A bundle carries the trace of its first traced command.
	var bundleTrace map[string]string
	if err := s.reproduce(outcomes); err != nil {
		return nil, nil, err
	}
	add := func(c Command, emit []Emission) error {
		for _, e := range emit {
			if bundled[e.Topic] {
				if toBundle == nil {
					toBundle = map[string][]schemas.Envelope{}
				}
				if _, ok := toBundle[e.Topic]; !ok {
					bundleOrder = append(bundleOrder, e.Topic)
				}
				if bundleTrace[e.Topic] == "" {
					if bundleTrace == nil {
						bundleTrace = map[string]string{}
					}
					bundleTrace[e.Topic] = topics.FormatTrace(c.Trace)
				}
				toBundle[e.Topic] = append(toBundle[e.Topic], e.Env)
				continue
			}
			row, err := pipeline.EventRow(e.Topic, e.Env)
			if err != nil {
				return err
			}
			row.TraceParent = topics.FormatTrace(c.Trace)
			outbox = append(outbox, row)
		}
		return nil
	}
	s.decidedAt, s.emitted = make([]time.Time, len(s.fresh)), make([][]Emission, len(s.fresh))
	for k, c := range s.fresh {
		o := outcomes[k]
		if isHeld(s.held, c) {
			continue
		}
		if c.Recorded != nil {
			// The stored and sent answer is the one the client was given.
			o.Status, o.Body, o.SelfRecorded = c.Recorded.Status, c.Recorded.Body, false
		}
		if !o.SelfRecorded && (!o.Unrecorded || c.Env.ReplyTo != "") {
			processed = append(processed, pipeline.Processed{CommandID: c.Env.ID, CommandType: c.Env.Type,
				RequestHash: c.Env.RequestHash, Status: o.Status, Body: o.Body})
		}
		s.results[s.freshIdx[k]] = schemas.Reply{CommandID: c.Env.ID, Status: o.Status, Body: o.Body}
		s.decidedAt[k], s.emitted[k] = o.DecidedAt, o.Emit
		if err := add(c, o.Emit); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range s.reproducedCmds() {
		if isHeld(s.held, c.Command) {
			continue
		}
		processed = append(processed, pipeline.Processed{CommandID: c.Env.ID, CommandType: c.Env.Type,
			RequestHash: c.Env.RequestHash, Status: c.Recorded.Status, Body: c.Recorded.Body})
		s.results[c.i] = schemas.Reply{CommandID: c.Env.ID, Status: c.Recorded.Status, Body: c.Recorded.Body}
		if err := add(c.Command, c.Recorded.Emit); err != nil {
			return nil, nil, err
		}
	}
	for _, topic := range bundleOrder {
		bundles, err := topics.Bundles(topic, toBundle[topic], time.Now())
		if err != nil {
			return nil, nil, err
		}
		for _, b := range bundles {
			row, err := pipeline.EventRow(topic, b)
			if err != nil {
				return nil, nil, err
			}
			row.TraceParent = bundleTrace[topic]
			outbox = append(outbox, row)
		}
	}
	return processed, outbox, nil
}

// replies builds the reply records of a committed batch; duplicates inside
// the batch answer like their first occurrence.
func (s *sorted) replies(cmds []Command) ([]*kgo.Record, error) {
	for i, j := range s.dupOf {
		s.results[i] = storedReply(cmds[i].Env, cmds[j].Env.RequestHash, s.results[j].Status, s.results[j].Body)
	}
	var replies []*kgo.Record
	for i, c := range cmds {
		if c.Env.ReplyTo == "" || isHeld(s.held, c) {
			continue
		}
		rec, err := replyRecord(c.Env, c.Trace, s.results[i])
		if err != nil {
			return nil, err
		}
		if c.Fetched != 0 {
			// The runner adds the batch's begin, commit and reply times.
			topics.StampHops(rec, c.Fetched)
		}
		replies = append(replies, rec)
	}
	return replies, nil
}

// answers are the journal entries of a committed batch's commands decided
// for the first time (journal.go), then its replies: the runner produces
// the entries before it sends the replies.
func (s *sorted) answers(cmds []Command) ([]*kgo.Record, error) {
	var out []*kgo.Record
	for k, c := range s.fresh {
		if c.Recorded != nil || isHeld(s.held, c) || k >= len(s.decidedAt) {
			continue
		}
		at := s.decidedAt[k]
		if at.IsZero() {
			at = time.Now()
		}
		rec, err := journalRecord(c, s.results[s.freshIdx[k]], at, s.emitted[k])
		if err != nil {
			return nil, err
		}
		if rec != nil {
			out = append(out, rec)
		}
	}
	// A command answered from its stored result is journaled again: the
	// batch that applied it may have stopped between its commit and its
	// journal entry, and this answer may be the first its client gets.
	for _, i := range s.again {
		if isHeld(s.held, cmds[i]) || cmds[i].Env.ReplyTo == "" {
			continue
		}
		rec, err := journalRecord(cmds[i], s.results[i], time.Time{}, nil)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			out = append(out, rec)
		}
	}
	replies, err := s.replies(cmds)
	return append(out, replies...), err
}

// storedReply answers a command that was applied before: the stored result
// when the request is the same, 409 when the same id came with another body.
func storedReply(env schemas.Envelope, storedHash string, status int, body []byte) schemas.Reply {
	if storedHash != env.RequestHash {
		return schemas.Reply{CommandID: env.ID, Status: 409, Body: schemas.IdempotencyConflict()}
	}
	return schemas.Reply{CommandID: env.ID, Status: status, Body: body, Replayed: true}
}

// replyRecord is the reply to cmd, in the command's trace.
func replyRecord(cmd schemas.Envelope, sc trace.SpanContext, reply schemas.Reply) (*kgo.Record, error) {
	env, err := schemas.New(schemas.TypeReply, cmd.ReplyTo, cmd.ActorUserID, reply, time.Now())
	if err != nil {
		return nil, err
	}
	env.CorrelationID = cmd.CorrelationID
	rec, err := topics.Record(topics.GatewayReplies, env)
	if err != nil {
		return nil, err
	}
	topics.SetTrace(rec, sc)
	return rec, nil
}

func failedReply(c Command) []*kgo.Record {
	if c.Env.ReplyTo == "" {
		return nil
	}
	rec, err := replyRecord(c.Env, c.Trace, schemas.Reply{CommandID: c.Env.ID, Status: 500,
		Body: schemas.ErrorJSON(schemas.CodeInternal, "the command could not be applied; it was parked for an operator", nil)})
	if err != nil {
		return nil
	}
	return []*kgo.Record{rec}
}
