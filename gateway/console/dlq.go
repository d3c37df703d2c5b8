package console

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
	"github.com/fintech/platform/storage/dlq"
	"github.com/fintech/platform/storage/fiat"
	"github.com/fintech/platform/topics"
)

// Broker is what the dead-letter tooling needs from Kafka.
type Broker interface {
	Spans(ctx context.Context, topics ...string) ([]topics.Span, error)
	Read(ctx context.Context, s topics.Span, from int64, limit int) ([]*kgo.Record, error)
	ReadOne(ctx context.Context, topic string, partition int32, offset int64) (*kgo.Record, error)
	Replay(ctx context.Context, rec *kgo.Record) error
}

// Decisions stores what operators decided about parked records.
type Decisions interface {
	Decisions(ctx context.Context, ids []string) (map[string]dlq.Decision, error)
	DecidedCounts(ctx context.Context, starts []dlq.Start) (map[string]int64, error)
	MarkReplayed(ctx context.Context, d dlq.Decision, audit fiat.AuditRow, publish func(context.Context) error) (dlq.Decision, error)
	MarkDiscarded(ctx context.Context, d dlq.Decision, audit fiat.AuditRow) (dlq.Decision, error)
}

var (
	_ Broker    = (*topics.Ops)(nil)
	_ Decisions = (*dlq.Store)(nil)
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
	ErrInvalidState = dlq.ErrInvalidState
)

// DLQ lists, replays and discards the records the consumers parked. The
// HTTP routes and `platform dlq` both use it, so a shell and the console
// act the same way and are audited the same way.
type DLQ struct {
	broker Broker
	store  Decisions
	now    func() time.Time
}

// NewDLQ builds the tooling.
func NewDLQ(broker Broker, store Decisions, now func() time.Time) (*DLQ, error) {
	if broker == nil || store == nil || now == nil {
		return nil, errors.New("dlq tooling: nil dependency")
	}
	return &DLQ{broker: broker, store: store, now: now}, nil
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

// DLQTopic resolves a topic filter: a DLQ topic, or a source topic that has
// one (fiat.commands means fiat.commands.dlq).
func DLQTopic(topic string) (string, error) {
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
func (d *DLQ) List(ctx context.Context, topic, after string, limit int) ([]schemas.DLQRecord, error) {
	names := topics.DLQTopics()
	if topic != "" {
		t, err := DLQTopic(topic)
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

// views renders records with their decisions.
func (d *DLQ) views(ctx context.Context, recs []*kgo.Record) ([]schemas.DLQRecord, error) {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = position{r.Topic, r.Partition, r.Offset}.id()
	}
	decided, err := d.store.Decisions(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]schemas.DLQRecord, len(recs))
	for i, r := range recs {
		out[i] = view(r, decided[ids[i]])
	}
	return out, nil
}

// view renders one parked record.
func view(r *kgo.Record, dec dlq.Decision) schemas.DLQRecord {
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
func (d *DLQ) record(ctx context.Context, id string) (*kgo.Record, position, error) {
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

// Show answers the record id names as listed, with its headers and its
// bytes as they sit on the DLQ topic (`platform dlq show`).
func (d *DLQ) Show(ctx context.Context, id string) (schemas.DLQRecord, map[string]string, []byte, error) {
	rec, _, err := d.record(ctx, id)
	if err != nil {
		return schemas.DLQRecord{}, nil, nil, err
	}
	v := view(rec, dlq.Decision{})
	decs, err := d.store.Decisions(ctx, []string{v.ID})
	if err != nil {
		return schemas.DLQRecord{}, nil, nil, err
	}
	headers := make(map[string]string, len(rec.Headers))
	for _, h := range rec.Headers {
		headers[h.Key] = string(h.Value)
	}
	return view(rec, decs[v.ID]), headers, rec.Value, nil
}

// Replay publishes the record id names again to its source topic, with the
// same envelope (so the same command id: a command applied meanwhile is not
// applied again), then records and audits it. A record is replayed once: a
// second replay is ErrInvalidState (see dlq.Store.MarkReplayed for why).
// actor is "admin:<user id>" or "cli:<os user>".
func (d *DLQ) Replay(ctx context.Context, id, actor string) (schemas.DLQRecord, error) {
	rec, p, err := d.record(ctx, id)
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	v := view(rec, dlq.Decision{})
	now := d.now().UTC()
	dec, err := d.store.MarkReplayed(ctx, dlq.Decision{RecordID: v.ID, Topic: p.topic, Partition: p.partition, Offset: p.offset,
		CommandID: v.CommandID, Actor: actor, DecidedAt: now},
		fiat.AuditRow{ID: schemas.NewID(), Actor: actor, Action: "dlq.replay", Subject: v.ID,
			Detail: fmt.Sprintf("command %s (%s) published again to %s", v.CommandID, v.Type, v.SourceTopic), CreatedAt: now},
		func(ctx context.Context) error { return d.broker.Replay(ctx, rec) })
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	return view(rec, dec), nil
}

// Discard records that the record id names will not be replayed, and
// audits it. A replayed record cannot be discarded (ErrInvalidState).
func (d *DLQ) Discard(ctx context.Context, id, actor string) (schemas.DLQRecord, error) {
	rec, p, err := d.record(ctx, id)
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	v := view(rec, dlq.Decision{})
	now := d.now().UTC()
	dec, err := d.store.MarkDiscarded(ctx, dlq.Decision{RecordID: v.ID, Topic: p.topic, Partition: p.partition, Offset: p.offset,
		CommandID: v.CommandID, Actor: actor, DecidedAt: now},
		fiat.AuditRow{ID: schemas.NewID(), Actor: actor, Action: "dlq.discard", Subject: v.ID,
			Detail: fmt.Sprintf("command %s (%s) of %s discarded", v.CommandID, v.Type, v.SourceTopic), CreatedAt: now})
	if err != nil {
		return schemas.DLQRecord{}, err
	}
	return view(rec, dec), nil
}

// Parked counts the records of every DLQ topic and those still parked.
func (d *DLQ) Parked(ctx context.Context) (schemas.ConsoleParked, error) {
	spans, err := d.broker.Spans(ctx, topics.DLQTopics()...)
	if err != nil {
		return schemas.ConsoleParked{}, err
	}
	starts := make([]dlq.Start, len(spans))
	totals := map[string]int64{}
	for i, s := range spans {
		starts[i] = dlq.Start{Topic: s.Topic, Partition: s.Partition, Offset: s.Start}
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
