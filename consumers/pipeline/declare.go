package pipeline

import (
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// Decider is one decoded command of a declared type, applied to B, the
// module's in-memory state of one batch. A module declares each command
// type once (Declare) and never switches over command types: the table
// decodes a record into its type's Decider and the framework (applier.go)
// calls Lock for every command of the batch, has the module read what they
// asked for, then calls Decide for each fresh one, in order.
type Decider[B any] interface {
	// Lock notes on the batch the rows the command reads and locks. It
	// only notes: the applier reads them all at once, in a fixed order.
	Lock(b B)
	// Decide applies the command to the batch's locked rows in memory: it
	// changes them, adds the rows it writes, and returns its reply with the
	// events it emits. A business rejection is an outcome with a 4xx
	// status; a rejected command changes nothing. A failure that is not
	// the command's (a database error, the random source) is the error: it
	// rolls the whole batch back.
	Decide(b B, env schemas.Envelope) (Outcome, error)
}

// Part is the batch state of a command type that keeps rows of its own
// beyond the module's shared ones: a batch makes it when a command of the
// type is loaded (PartOf), queues its reads after the shared locks and its
// writes before the shared ones, in declaration order, so every batch takes
// the locks in the same order.
type Part[B any] interface {
	QueueReads(q *pgx.Batch)
	QueueWrites(q *pgx.Batch, b B)
}

// Declaration is what an applier knows of one record type: its type
// string, how its data decodes, and the part it keeps, if any; for an event
// type of another module (DeclareEvent), the event topic it is read from.
type Declaration[B any] struct {
	typ    string
	topic  string       // "" for a command type of the table's topic
	data   reflect.Type // T, which is or embeds the catalog's data type
	decode func(schemas.Envelope) (Decider[B], error)
	part   func() Part[B] // nil for a type that uses the shared rows only
}

type validator interface{ Validate() error }

// Enveloped is a declaration's type whose locks depend on its record's
// envelope (its actor, its time) and not only on its data: the table hands
// it the envelope (Bind) as it decodes the record, before Validate and
// Lock.
type Enveloped interface{ Bind(env schemas.Envelope) }

// Declare declares command type typ, applied by T: a struct that embeds the
// command's data type of the schemas, so the data decodes into it and its
// Validate, when it has one, checks it. *T is the Decider (and, when it
// needs the envelope before it locks, Enveloped).
func Declare[B, T any, C interface {
	*T
	Decider[B]
}](typ string) Declaration[B] {
	return Declaration[B]{typ: typ, data: reflect.TypeFor[T](), decode: func(env schemas.Envelope) (Decider[B], error) {
		v, err := schemas.DataAs[T](env)
		if err != nil {
			return nil, err
		}
		c := C(&v)
		if e, ok := any(c).(Enveloped); ok {
			e.Bind(env)
		}
		if v, ok := any(c).(validator); ok {
			if err := v.Validate(); err != nil {
				return nil, err
			}
		}
		return c, nil
	}}
}

// DeclareEvent declares event type typ of another module, read from its
// event topic, applied by T as Declare's (it embeds the event's data type
// of schemas.EventCatalog). An event answers nobody: whatever its Decide
// returns, its outcome is 200 with no body and no processed-command row
// (Outcome.Unrecorded), with the events it emits; a record of the topic of
// another type, or whose data does not read, is answered so too and changes
// nothing. A consumer reads the event topics of its declarations
// (Table.EventTopics) beside its command topic.
func DeclareEvent[B, T any, C interface {
	*T
	Decider[B]
}](topic, typ string) Declaration[B] {
	d := Declare[B, T, C](typ)
	d.topic = topic
	return d
}

// DeclareWithPart declares a command type whose commands keep batch state
// of their own, made by newPart.
func DeclareWithPart[B, T any, C interface {
	*T
	Decider[B]
}, P Part[B]](typ string, newPart func() P) Declaration[B] {
	d := Declare[B, T, C](typ)
	d.part = func() Part[B] { return newPart() }
	return d
}

// Table is a module's declared command types, in declaration order (the
// order its parts lock in).
type Table[B any] struct {
	module string
	topic  string // its command topic
	log    *slog.Logger
	decls  []Declaration[B]
	byType map[recordKey]int // -> index in decls
	events []string          // the event topics declared, sorted
}

// recordKey names a declared record type: the event topic of an event type
// (DeclareEvent), "" for a command type of the table's topic.
type recordKey struct{ topic, typ string }

// NewTable builds the table of module, the consumer of topic (named in
// its answers to commands it cannot read). log, when not nil, logs those
// commands. The declarations are checked against schemas.CommandCatalog
// (NewTableOf): a consumer whose declarations and the catalog disagree
// does not start.
func NewTable[B any](module, topic string, log *slog.Logger, decls ...Declaration[B]) (*Table[B], error) {
	return NewTableOf(schemas.CommandCatalog(), module, topic, log, decls...)
}

// NewTableOf builds the table of module, checked against catalog: a type
// declared twice, a declaration of a type the catalog does not list (or
// lists on another topic, or with a data type the declaration's type
// neither is nor embeds), and a type the catalog lists on topic without a
// declaration are each an error naming the step of
// consumers/pipeline/README.md ("A new command") that was forgotten. An
// event declaration (DeclareEvent) is checked against
// schemas.EventCatalog the same way (its topic is events.<module>); a
// consumer declares only the events it reads.
func NewTableOf[B any](catalog []schemas.CommandInfo, module, topic string, log *slog.Logger, decls ...Declaration[B]) (*Table[B], error) {
	t := &Table[B]{module: module, topic: topic, log: log, decls: decls, byType: make(map[recordKey]int, len(decls))}
	listed := make(map[string]schemas.CommandInfo, len(catalog))
	for _, c := range catalog {
		listed[c.Type] = c
	}
	for i, d := range decls {
		if d.decode == nil {
			return nil, fmt.Errorf("%s applier: declaration %d is not made by Declare", module, i)
		}
		if _, dup := t.byType[recordKey{d.topic, d.typ}]; dup {
			return nil, fmt.Errorf("%s applier: command type %s declared twice", module, d.typ)
		}
		t.byType[recordKey{d.topic, d.typ}] = i
		if d.topic != "" {
			if err := t.checkEvent(d); err != nil {
				return nil, err
			}
			if !slices.Contains(t.events, d.topic) {
				t.events = append(t.events, d.topic)
			}
			continue
		}
		c, ok := listed[d.typ]
		switch {
		case !ok:
			return nil, fmt.Errorf("%s applier: %s is declared but schemas.CommandCatalog does not list it: "+
				"add its catalog line (type, topic, data type) in schemas/commands.go", module, d.typ)
		case c.Topic != topic:
			return nil, fmt.Errorf("%s applier: %s is declared by the consumer of %s, but schemas.CommandCatalog "+
				"lists it on %s", module, d.typ, topic, c.Topic)
		case !carries(d.data, reflect.TypeOf(c.Data)):
			return nil, fmt.Errorf("%s applier: %s is declared with %v, which neither is nor embeds its "+
				"catalog data type %v", module, d.typ, d.data, reflect.TypeOf(c.Data))
		}
	}
	slices.Sort(t.events)
	for _, c := range catalog {
		if _, ok := t.byType[recordKey{"", c.Type}]; c.Topic == topic && !ok {
			return nil, fmt.Errorf("%s applier: schemas.CommandCatalog lists %s on %s but the %s consumer "+
				"does not declare it: add its file in the module and one line in its declarations()",
				module, c.Type, topic, module)
		}
	}
	return t, nil
}

// checkEvent checks an event declaration against schemas.EventCatalog.
func (t *Table[B]) checkEvent(d Declaration[B]) error {
	i := slices.IndexFunc(schemas.EventCatalog(), func(e schemas.EventInfo) bool { return e.Type == d.typ })
	if i < 0 {
		return fmt.Errorf("%s applier: event %s is declared but schemas.EventCatalog does not list it", t.module, d.typ)
	}
	e := schemas.EventCatalog()[i]
	switch {
	case "events."+e.Module != d.topic:
		return fmt.Errorf("%s applier: event %s is declared on %s, but schemas.EventCatalog lists it of module %s "+
			"(events.%s)", t.module, d.typ, d.topic, e.Module, e.Module)
	case !carries(d.data, reflect.TypeOf(e.Data)):
		return fmt.Errorf("%s applier: event %s is declared with %v, which neither is nor embeds its "+
			"catalog data type %v", t.module, d.typ, d.data, reflect.TypeOf(e.Data))
	}
	return nil
}

// carries reports whether decl, a declaration's type, is data or embeds it.
func carries(decl, data reflect.Type) bool {
	if decl == data {
		return true
	}
	if decl.Kind() != reflect.Struct {
		return false
	}
	for i := range decl.NumField() {
		if f := decl.Field(i); f.Anonymous && f.Type == data {
			return true
		}
	}
	return false
}

// Types lists the declared command types, in declaration order.
func (t *Table[B]) Types() []string {
	out := make([]string, 0, len(t.decls))
	for _, d := range t.decls {
		if d.topic == "" {
			out = append(out, d.typ)
		}
	}
	return out
}

// EventTopics lists, sorted, the event topics of the table's event
// declarations (DeclareEvent): what its consumer reads beside its command
// topic.
func (t *Table[B]) EventTopics() []string { return slices.Clone(t.events) }

// Decode reads a command with its type's declaration. A command that cannot
// be read (a type not declared, data that does not decode or fails its
// Validate) becomes one that locks nothing and answers 400
// invalid_command.
func (t *Table[B]) Decode(env schemas.Envelope) Decider[B] {
	i, ok := t.byType[recordKey{"", env.Type}]
	if !ok {
		return unreadable[B]{t, fmt.Errorf("%s consumer does not handle %q", t.module, env.Type)}
	}
	c, err := t.decls[i].decode(env)
	if err != nil {
		return unreadable[B]{t, err}
	}
	return c
}

// DecodeRecord reads a record of the batch: one of the table's command
// topic (or of none named) as a command (Decode); one of another topic as
// an event, with its event declaration (DeclareEvent). An event the table
// does not declare on its record's topic, or whose data does not read,
// becomes one that locks nothing and is answered as every event: 200 with
// no body, unrecorded.
func (t *Table[B]) DecodeRecord(c Command) Decider[B] {
	if c.Topic == "" || c.Topic == t.topic {
		return t.Decode(c.Env)
	}
	i, ok := t.byType[recordKey{c.Topic, c.Env.Type}]
	if !ok {
		return ignored[B]{}
	}
	d, err := t.decls[i].decode(c.Env)
	if err != nil {
		return ignored[B]{}
	}
	return eventRecord[B]{d}
}

// DecodeAll decodes the records of a batch, in order (DecodeRecord).
func (t *Table[B]) DecodeAll(cmds []Command) []Decider[B] {
	out := make([]Decider[B], len(cmds))
	for i, c := range cmds {
		out[i] = t.DecodeRecord(c)
	}
	return out
}

// eventRecord is a record of an event topic read by its declaration: it answers
// nobody (DeclareEvent).
type eventRecord[B any] struct{ Decider[B] }

func (e eventRecord[B]) Decide(b B, env schemas.Envelope) (Outcome, error) {
	o, err := e.Decider.Decide(b, env)
	if err != nil {
		return Outcome{}, err
	}
	return answered(o.Emit), nil
}

// ignored is a record of an event topic that earns its consumer nothing.
type ignored[B any] struct{}

func (ignored[B]) Lock(B) {}

func (ignored[B]) Decide(B, schemas.Envelope) (Outcome, error) { return answered(nil), nil }

// answered is the outcome of an event record: 200, no body, no processed
// row (nobody waits for it; what it emits carries ids derived from it).
func answered(emit []Emission) Outcome {
	return Outcome{Status: http.StatusOK, Emit: emit, Unrecorded: true}
}

// unreadable is a command that could not be read.
type unreadable[B any] struct {
	t   *Table[B]
	err error
}

func (unreadable[B]) Lock(B) {}

func (u unreadable[B]) Decide(_ B, env schemas.Envelope) (Outcome, error) {
	if u.t.log != nil {
		u.t.log.Warn("unreadable command", "module", u.t.module, "id", env.ID, "type", env.Type, "err", u.err)
	}
	return Unreadable(u.err.Error()), nil
}

// Parts is the part state of one batch: a batch holds one, made by
// NewParts.
type Parts[B any] struct {
	t  *Table[B]
	ps []Part[B] // by declaration index; nil until first used
}

// NewParts returns the empty part state of a new batch.
func (t *Table[B]) NewParts() Parts[B] {
	return Parts[B]{t: t, ps: make([]Part[B], len(t.decls))}
}

// PartOf returns the part of command type typ in ps, made on first use. It
// panics when typ was not declared with DeclareWithPart and that P: a
// programming error of the module, found by its first test.
func PartOf[P Part[B], B any](ps *Parts[B], typ string) P {
	i, ok := ps.t.byType[recordKey{"", typ}]
	if !ok || ps.t.decls[i].part == nil {
		panic(fmt.Sprintf("%s applier: %s has no part", ps.t.module, typ))
	}
	if ps.ps[i] == nil {
		ps.ps[i] = ps.t.decls[i].part()
	}
	return ps.ps[i].(P)
}

// QueueReads queues the reads of the parts made, in declaration order.
func (ps *Parts[B]) QueueReads(q *pgx.Batch) {
	for _, p := range ps.ps {
		if p != nil {
			p.QueueReads(q)
		}
	}
}

// QueueWrites queues the writes of the parts made, in declaration order.
func (ps *Parts[B]) QueueWrites(q *pgx.Batch, b B) {
	for _, p := range ps.ps {
		if p != nil {
			p.QueueWrites(q, b)
		}
	}
}
