// Package dlq is the dead letters: the records the consumers parked on the
// <topic>.dlq topics (topics/dlq.Park), listed, shown, replayed and
// discarded by operators. The console's routes (/api/platform/admin/dlq)
// and `platform dlq` both call it, so a shell and the console act the same
// way and are audited the same way. The records stay on the broker; the
// decisions about them and their audit are in Postgres (storage/dlq). It
// reads Kafka and writes Postgres, so it sits above both, beside the
// console it serves, not in topics (below storage).
package dlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fintech/platform/schemas"
	dlqstore "github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/topics"
)

// HeaderReplayOf names, on a record a replay published again, the id of the
// parked record it replays. A consumer that parks it again keeps its
// headers, so the new parked record names the one it is a replay of.
const HeaderReplayOf = "dlq-replay-of"

// DefaultLimit is how many records a list answers when not told.
const DefaultLimit = 50

// Broker is what the dead-letter tooling needs from Kafka.
type Broker interface {
	Spans(ctx context.Context, topics ...string) ([]topics.Span, error)
	Read(ctx context.Context, s topics.Span, from int64, limit int) ([]*kgo.Record, error)
	ReadOne(ctx context.Context, topic string, partition int32, offset int64) (*kgo.Record, error)
	Publish(ctx context.Context, rec *kgo.Record) error
}

// Decisions stores what operators decided about parked records, and audits
// it.
type Decisions interface {
	Decisions(ctx context.Context, ids []string) (map[string]dlqstore.Decision, error)
	DecidedCounts(ctx context.Context, starts []dlqstore.Start) (map[string]int64, error)
	ReplayedByCommand(ctx context.Context, commandIDs []string) (map[string][]dlqstore.Decision, error)
	History(ctx context.Context, recordID string) ([]dlqstore.Audit, error)
	MarkReplayed(ctx context.Context, d dlqstore.Decision, audit dlqstore.Audit, publish func(context.Context) error) (dlqstore.Decision, error)
	MarkDiscarded(ctx context.Context, d dlqstore.Decision, audit dlqstore.Audit) (dlqstore.Decision, error)
}

var (
	_ Broker    = (*topics.Ops)(nil)
	_ Decisions = (*dlqstore.Store)(nil)
)

// Errors of the dead-letter tooling.
var (
	// ErrUnknownRecord means the id names no record a DLQ topic holds.
	ErrUnknownRecord = errors.New("no such parked record")
	// ErrUnknownTopic means the topic is neither a DLQ topic nor a topic
	// with one.
	ErrUnknownTopic = errors.New("no such DLQ topic")
	// ErrInvalidState means a replayed record cannot be discarded or
	// replayed again.
	ErrInvalidState = dlqstore.ErrInvalidState
)

// Tooling lists, shows, replays and discards the records the consumers
// parked.
type Tooling struct {
	broker Broker
	store  Decisions
	now    func() time.Time
}

// New builds the tooling.
func New(broker Broker, store Decisions, now func() time.Time) (*Tooling, error) {
	if broker == nil || store == nil || now == nil {
		return nil, errors.New("dlq tooling: nil dependency")
	}
	return &Tooling{broker: broker, store: store, now: now}, nil
}

// position is a record's place: its id is "<topic>:<partition>:<offset>".
type position struct {
	topic     string
	partition int32
	offset    int64
}

func (p position) id() string {
	return p.topic + ":" + strconv.FormatInt(int64(p.partition), 10) + ":" + strconv.FormatInt(p.offset, 10)
}

// parseID reads a record id; ok is false for anything that is not the id
// of a position on a DLQ topic of the platform.
func parseID(id string) (position, bool) {
	rest, off, ok := cut(id)
	if !ok {
		return position{}, false
	}
	topic, part, ok := cut(rest)
	if !ok || !isDLQTopic(topic) {
		return position{}, false
	}
	p, err1 := strconv.ParseInt(part, 10, 32)
	o, err2 := strconv.ParseInt(off, 10, 64)
	if err1 != nil || err2 != nil || p < 0 || o < 0 {
		return position{}, false
	}
	return position{topic: topic, partition: int32(p), offset: o}, true
}

// ValidID reports whether id names a position on a DLQ topic (a record
// there or not).
func ValidID(id string) bool {
	_, ok := parseID(id)
	return ok
}

func cut(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func isDLQTopic(topic string) bool {
	for _, t := range topics.DLQTopics() {
		if t == topic {
			return true
		}
	}
	return false
}

// Topic resolves a topic filter: a DLQ topic, or a source topic that has
// one (fiat.commands means fiat.commands.dlq).
func Topic(topic string) (string, error) {
	if isDLQTopic(topic) {
		return topic, nil
	}
	if isDLQTopic(topics.DLQ(topic)) {
		return topics.DLQ(topic), nil
	}
	return "", ErrUnknownTopic
}

// List returns up to limit+1 parked records (so the caller knows whether
// more remain) after the record id after, in the order of topic, partition
// and offset; topic, when set, keeps one DLQ topic.
func (d *Tooling) List(ctx context.Context, topic, after string, limit int) ([]schemas.DLQRecord, error) {
	names := topics.DLQTopics()
	if topic != "" {
		t, err := Topic(topic)
		if err != nil {
			return nil, err
		}
		names = []string{t}
	}
	var from position
	if after != "" {
		p, ok := parseID(after)
		if !ok {
			return nil, ErrUnknownRecord
		}
		from = p
	}
	spans, err := d.broker.Spans(ctx, names...)
	if err != nil {
		return nil, err
	}
	var recs []*kgo.Record
	for _, s := range spans {
		if len(recs) > limit {
			break
		}
		start := s.Start
		if after != "" {
			if s.Topic < from.topic || (s.Topic == from.topic && s.Partition < from.partition) {
				continue
			}
			if s.Topic == from.topic && s.Partition == from.partition {
				start = max(start, from.offset+1)
			}
		}
		got, err := d.broker.Read(ctx, s, start, limit+1-len(recs))
		if err != nil {
			return nil, err
		}
		recs = append(recs, got...)
	}
	return d.views(ctx, recs)
}

// views renders records with their decisions, and names the record each
// one is a replay of.
func (d *Tooling) views(ctx context.Context, recs []*kgo.Record) ([]schemas.DLQRecord, error) {
	out := make([]schemas.DLQRecord, len(recs))
	ids := make([]string, 0, 2*len(recs))
	claims := make([]string, len(recs))
	for i, r := range recs {
		out[i] = view(r, dlqstore.Decision{})
		ids = append(ids, out[i].ID)
		if p, ok := parseID(topics.Header(r, HeaderReplayOf)); ok && p.topic == r.Topic && p.id() != out[i].ID {
			claims[i] = p.id()
			ids = append(ids, claims[i])
		}
	}
	decided, err := d.store.Decisions(ctx, ids)
	if err != nil {
		return nil, err
	}
	var unlinked []string
	for i, r := range recs {
		out[i] = view(r, decided[out[i].ID])
		// The header is a claim: it links only to a record that was replayed
		// with this record's command.
		if c := decided[claims[i]]; claims[i] != "" && c.State == dlqstore.StateReplayed && c.CommandID == out[i].CommandID {
			out[i].ReplayOf = claims[i]
		} else if out[i].CommandID != "" {
			unlinked = append(unlinked, out[i].CommandID)
		}
	}
	if len(unlinked) == 0 {
		return out, nil
	}
	// A command that failed to apply is parked from its envelope, without
	// the replayed record's headers: it is the replay of the latest record
	// of its command, on its DLQ topic before it, replayed before it was
	// parked.
	replayed, err := d.store.ReplayedByCommand(ctx, unlinked)
	if err != nil {
		return nil, err
	}
	for i := range out {
		v := &out[i]
		if v.ReplayOf != "" {
			continue
		}
		var best dlqstore.Decision
		for _, c := range replayed[v.CommandID] {
			before := c.Partition != v.Partition || c.Offset < v.Offset
			// Record timestamps are whole milliseconds.
			if c.Topic == v.Topic && c.RecordID != v.ID && before && !c.DecidedAt.Truncate(time.Millisecond).After(v.FirstSeenAt) &&
				(best.RecordID == "" || c.DecidedAt.After(best.DecidedAt)) {
				best = c
			}
		}
		v.ReplayOf = best.RecordID
	}
	return out, nil
}

// view renders one parked record.
func view(r *kgo.Record, dec dlqstore.Decision) schemas.DLQRecord {
	id, typ := topics.Header(r, "id"), topics.Header(r, "type")
	if id == "" || typ == "" {
		// A record published without the platform's headers: the envelope
		// may still name them.
		var env struct{ ID, Type string }
		if json.Unmarshal(r.Value, &env) == nil {
			id, typ = firstNonEmpty(id, env.ID), firstNonEmpty(typ, env.Type)
		}
	}
	src, _ := topics.DLQSource(r)
	v := schemas.DLQRecord{
		ID: position{r.Topic, r.Partition, r.Offset}.id(), Topic: r.Topic, SourceTopic: src,
		Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), CommandID: id, Type: typ,
		Error: topics.Header(r, topics.HeaderDLQError), FirstSeenAt: r.Timestamp.UTC(),
		State: schemas.DLQStateParked,
	}
	if dec.RecordID != "" {
		at := dec.DecidedAt.UTC()
		v.State, v.Replays, v.DecidedBy, v.DecidedAt = dec.State, dec.Replays, dec.Actor, &at
	}
	return v
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// record reads the record an id names, or ErrUnknownRecord.
func (d *Tooling) record(ctx context.Context, id string) (*kgo.Record, position, error) {
	p, ok := parseID(id)
	if !ok {
		return nil, p, ErrUnknownRecord
	}
	rec, err := d.broker.ReadOne(ctx, p.topic, p.partition, p.offset)
	if err != nil {
		return nil, p, err
	}
	if rec == nil {
		return nil, p, ErrUnknownRecord
	}
	return rec, p, nil
}

// viewOf reads the record an id names and its view as listed.
func (d *Tooling) viewOf(ctx context.Context, id string) (*kgo.Record, position, schemas.DLQRecord, error) {
	rec, p, err := d.record(ctx, id)
	if err != nil {
		return nil, p, schemas.DLQRecord{}, err
	}
	vs, err := d.views(ctx, []*kgo.Record{rec})
	if err != nil {
		return nil, p, schemas.DLQRecord{}, err
	}
	return rec, p, vs[0], nil
}

// Shown is one parked record as `platform dlq show` prints it.
type Shown struct {
	Record  schemas.DLQRecord
	Headers map[string]string
	// Value is the record's bytes as they sit on the DLQ topic.
	Value []byte
	// History is every audited decision about it, oldest first.
	History []dlqstore.Audit
}

// Show answers the record id names as listed, with its headers, its bytes
// and the decisions about it.
func (d *Tooling) Show(ctx context.Context, id string) (Shown, error) {
	rec, _, v, err := d.viewOf(ctx, id)
	if err != nil {
		return Shown{}, err
	}
	hist, err := d.store.History(ctx, v.ID)
	if err != nil {
		return Shown{}, err
	}
	headers := make(map[string]string, len(rec.Headers))
	for _, h := range rec.Headers {
		headers[h.Key] = string(h.Value)
	}
	return Shown{Record: v, Headers: headers, Value: rec.Value, History: hist}, nil
}

// Replay publishes the record id names again to its source topic, with the
// same envelope (so the same command id: a command applied meanwhile is not
// applied again) and a dlq-replay-of header naming it, then records and
// audits it. A record is replayed once: a second replay is ErrInvalidState
// (see storage/dlq Store.MarkReplayed for why). actor is "admin:<user id>"
// or "cli:<os user>".
func (d *Tooling) Replay(ctx context.Context, id, actor string) (schemas.DLQRecord, error) {
	rec, p, v, err := d.viewOf(ctx, id)
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	again, err := replayRecord(rec, v.ID)
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	now := d.now().UTC()
	dec, err := d.store.MarkReplayed(ctx, dlqstore.Decision{RecordID: v.ID, Topic: p.topic, Partition: p.partition, Offset: p.offset,
		CommandID: v.CommandID, Actor: actor, DecidedAt: now},
		dlqstore.Audit{ID: schemas.NewID(), RecordID: v.ID, Actor: actor, Action: dlqstore.ActionReplay,
			Detail: fmt.Sprintf("%s published again to %s", describe(v), v.SourceTopic), CreatedAt: now},
		func(ctx context.Context) error { return d.broker.Publish(ctx, again) })
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	return decide(v, dec), nil
}

// replayRecord is a parked record as a replay publishes it again to its
// source topic: its key, value and headers, less those the parking (or an
// earlier replay) added, and a header naming the parked record.
func replayRecord(rec *kgo.Record, id string) (*kgo.Record, error) {
	src, err := topics.DLQSource(rec)
	if err != nil {
		return nil, err
	}
	out := &kgo.Record{Topic: src, Key: rec.Key, Value: rec.Value}
	for _, h := range rec.Headers {
		if h.Key != topics.HeaderDLQError && h.Key != topics.HeaderDLQSource && h.Key != HeaderReplayOf {
			out.Headers = append(out.Headers, h)
		}
	}
	out.Headers = append(out.Headers, kgo.RecordHeader{Key: HeaderReplayOf, Value: []byte(id)})
	return out, nil
}

// Discard records that the record id names will not be replayed, and
// audits it. A replayed record cannot be discarded (ErrInvalidState).
func (d *Tooling) Discard(ctx context.Context, id, actor string) (schemas.DLQRecord, error) {
	_, p, v, err := d.viewOf(ctx, id)
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	now := d.now().UTC()
	dec, err := d.store.MarkDiscarded(ctx, dlqstore.Decision{RecordID: v.ID, Topic: p.topic, Partition: p.partition, Offset: p.offset,
		CommandID: v.CommandID, Actor: actor, DecidedAt: now},
		dlqstore.Audit{ID: schemas.NewID(), RecordID: v.ID, Actor: actor, Action: dlqstore.ActionDiscard,
			Detail: fmt.Sprintf("%s of %s discarded", describe(v), v.SourceTopic), CreatedAt: now})
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	return decide(v, dec), nil
}

// decide is v with the decision just made about it.
func decide(v schemas.DLQRecord, dec dlqstore.Decision) schemas.DLQRecord {
	at := dec.DecidedAt.UTC()
	v.State, v.Replays, v.DecidedBy, v.DecidedAt = dec.State, dec.Replays, dec.Actor, &at
	return v
}

// Describe names a parked record's command, or says it had none readable
// (a record that was not a readable envelope), and the record it is a
// replay of.
func Describe(r schemas.DLQRecord) string {
	s := describe(r)
	if r.ReplayOf != "" {
		s += ", replay of " + r.ReplayOf
	}
	return s
}

func describe(r schemas.DLQRecord) string {
	switch {
	case r.CommandID != "" && r.Type != "":
		return "command " + r.CommandID + ", " + r.Type
	case r.CommandID != "":
		return "command " + r.CommandID
	default:
		return "a record with no readable command id"
	}
}

// Parked counts the records of every DLQ topic and those still parked.
func (d *Tooling) Parked(ctx context.Context) (schemas.ConsoleParked, error) {
	spans, err := d.broker.Spans(ctx, topics.DLQTopics()...)
	if err != nil {
		return schemas.ConsoleParked{}, err
	}
	starts := make([]dlqstore.Start, len(spans))
	totals := map[string]int64{}
	for i, s := range spans {
		starts[i] = dlqstore.Start{Topic: s.Topic, Partition: s.Partition, Offset: s.Start}
		totals[s.Topic] += s.End - s.Start
	}
	decided, err := d.store.DecidedCounts(ctx, starts)
	if err != nil {
		return schemas.ConsoleParked{}, err
	}
	out := schemas.ConsoleParked{Topics: []schemas.ConsoleParkedTopic{}, At: d.now().UTC()}
	for _, t := range topics.DLQTopics() {
		out.Topics = append(out.Topics, schemas.ConsoleParkedTopic{Topic: t, Total: totals[t], Parked: max(totals[t]-decided[t], 0)})
	}
	return out, nil
}
