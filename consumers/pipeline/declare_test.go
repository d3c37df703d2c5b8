package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// tBatch is a toy module's batch: what its commands locked, decided and
// queued.
type tBatch struct {
	parts   pipeline.Parts[*tBatch]
	locked  []string
	decided []string
}

// tCredit is a toy command type with a Validate.
type tCredit struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
}

func (c tCredit) Validate() error {
	if c.Amount <= 0 {
		return errors.New("amount must be positive")
	}
	return nil
}

type credit struct{ tCredit }

func (c *credit) Lock(b *tBatch) { b.locked = append(b.locked, c.Account) }

func (c *credit) Decide(b *tBatch, env schemas.Envelope) (pipeline.Outcome, error) {
	if c.Account == "broken" {
		return pipeline.Outcome{}, errors.New("the database went away")
	}
	b.decided = append(b.decided, env.ID)
	return pipeline.JSON(http.StatusOK, map[string]int64{"amount": c.Amount}), nil
}

// note is a toy command type with a part of its own.
type note struct {
	Text string `json:"text"`
}

type noting struct{ note }

type notes struct{ name string }

func (p *notes) QueueReads(q *pgx.Batch) { q.Queue("select '" + p.name + " reads'") }
func (p *notes) QueueWrites(q *pgx.Batch, _ *tBatch) {
	q.Queue("select '" + p.name + " writes'")
}

func (n *noting) Lock(b *tBatch) { pipeline.PartOf[*notes](&b.parts, "toy.note") }

func (n *noting) Decide(b *tBatch, env schemas.Envelope) (pipeline.Outcome, error) {
	pipeline.PartOf[*notes](&b.parts, "toy.note")
	return pipeline.JSON(http.StatusCreated, map[string]string{"text": n.Text}), nil
}

type other struct{}

func (*other) Lock(*tBatch) {}
func (*other) Decide(*tBatch, schemas.Envelope) (pipeline.Outcome, error) {
	return pipeline.JSON(http.StatusAccepted, nil), nil
}

// toyCatalog is the toy module's command catalog.
var toyCatalog = []schemas.CommandInfo{
	{Type: "toy.credit", Topic: "toy.commands", Data: tCredit{}},
	{Type: "toy.note", Topic: "toy.commands", Data: note{}},
	{Type: "toy.other", Topic: "toy.commands", Data: other{}},
	{Type: "elsewhere.cmd", Topic: "elsewhere.commands", Data: note{}},
}

var creditCatalog = toyCatalog[:1]

func toyTable(t *testing.T) *pipeline.Table[*tBatch] {
	t.Helper()
	tb, err := pipeline.NewTableOf(toyCatalog, "toy", "toy.commands", nil,
		pipeline.Declare[*tBatch, credit]("toy.credit"),
		pipeline.DeclareWithPart[*tBatch, noting]("toy.note", func() *notes { return &notes{name: "note"} }),
		pipeline.DeclareWithPart[*tBatch, other]("toy.other", func() *notes { return &notes{name: "other"} }),
	)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func toyEnv(t *testing.T, id, typ string, data any) schemas.Envelope {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return schemas.Envelope{ID: id, Type: typ, Data: raw}
}

// TestTableDecodesByDeclaration: each declared type decodes into its
// Decider; an undeclared type, data that does not decode and data failing
// its Validate each answer 400 invalid_command and lock nothing; a
// failure that is not the command's is Decide's error.
func TestTableDecodesByDeclaration(t *testing.T) {
	tb := toyTable(t)
	if got := tb.Types(); !slices.Equal(got, []string{"toy.credit", "toy.note", "toy.other"}) {
		t.Fatalf("Types() = %v", got)
	}
	envs := []schemas.Envelope{
		toyEnv(t, "c1", "toy.credit", tCredit{Account: "a", Amount: 5}),
		toyEnv(t, "u1", "toy.unknown", map[string]any{}),
		toyEnv(t, "g1", "toy.credit", map[string]any{"amount": "ten"}),
		toyEnv(t, "v1", "toy.credit", tCredit{Account: "b", Amount: 0}),
	}
	cmds := make([]pipeline.Command, len(envs))
	for i, e := range envs {
		cmds[i] = pipeline.Command{Env: e}
	}
	b := &tBatch{parts: tb.NewParts()}
	ds := tb.DecodeAll(cmds)
	for _, d := range ds {
		d.Lock(b)
	}
	if !slices.Equal(b.locked, []string{"a"}) {
		t.Fatalf("locked %v, want only the readable credit's account", b.locked)
	}
	for i, d := range ds {
		o, err := d.Decide(b, envs[i])
		if err != nil {
			t.Fatalf("command %s: %v", envs[i].ID, err)
		}
		if i == 0 {
			if o.Status != http.StatusOK || string(o.Body) != `{"amount":5}` {
				t.Fatalf("the credit: %d %s", o.Status, o.Body)
			}
			continue
		}
		if o.Status != http.StatusBadRequest || !strings.Contains(string(o.Body), schemas.CodeInvalidCommand) {
			t.Fatalf("command %s: %d %s, want 400 invalid_command", envs[i].ID, o.Status, o.Body)
		}
	}
	if o, _ := ds[1].Decide(b, envs[1]); !strings.Contains(string(o.Body), `toy consumer does not handle`) {
		t.Fatal("the unknown type's answer does not name the module")
	}
	if !slices.Equal(b.decided, []string{"c1"}) {
		t.Fatalf("decided %v", b.decided)
	}
	broken := toyEnv(t, "x1", "toy.credit", tCredit{Account: "broken", Amount: 1})
	if _, err := tb.Decode(broken).Decide(b, broken); err == nil || err.Error() != "the database went away" {
		t.Fatalf("err = %v, want the database's failure", err)
	}
}

// TestTableRefusesDuplicates: a type declared twice, or a declaration not
// made by Declare, is refused when the table is built.
func TestTableRefusesDuplicates(t *testing.T) {
	if _, err := pipeline.NewTableOf(toyCatalog, "toy", "toy.commands", nil,
		pipeline.Declare[*tBatch, credit]("toy.credit"),
		pipeline.Declare[*tBatch, noting]("toy.credit"),
	); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Fatalf("err = %v, want declared twice", err)
	}
	if _, err := pipeline.NewTableOf(toyCatalog, "toy", "toy.commands", nil, pipeline.Declaration[*tBatch]{}); err == nil {
		t.Fatal("a zero declaration was accepted")
	}
}

// TestPartsQueueInDeclarationOrder: a part is made on first use, once, and
// the parts made queue their reads and writes in declaration order,
// whatever order the batch's commands came in.
func TestPartsQueueInDeclarationOrder(t *testing.T) {
	tb := toyTable(t)
	b := &tBatch{parts: tb.NewParts()}
	first := pipeline.PartOf[*notes](&b.parts, "toy.other")
	pipeline.PartOf[*notes](&b.parts, "toy.note")
	if again := pipeline.PartOf[*notes](&b.parts, "toy.other"); again != first {
		t.Fatal("PartOf made a second part for one type")
	}
	q := &pgx.Batch{}
	b.parts.QueueReads(q)
	b.parts.QueueWrites(q, b)
	var got []string
	for _, qq := range q.QueuedQueries {
		got = append(got, qq.SQL)
	}
	want := []string{"select 'note reads'", "select 'other reads'", "select 'note writes'", "select 'other writes'"}
	if !slices.Equal(got, want) {
		t.Fatalf("queued %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("PartOf of a type without a part did not panic")
		}
	}()
	pipeline.PartOf[*notes](&b.parts, "toy.credit")
}

// qBatch is tBatch driven by the framework in the pipelined shape.
type qBatch struct {
	*tBatch
	settled int
	at      []string
}

func (b *qBatch) Stamp(i int) time.Time { return time.Unix(int64(i), 0) }
func (b *qBatch) At(now time.Time, env schemas.Envelope) {
	b.at = append(b.at, env.ID+"@"+strconv.FormatInt(now.Unix(), 10))
}
func (b *qBatch) QueueReads(q *pgx.Batch)  { q.Queue("select 'reads'") }
func (b *qBatch) Settle(fresh int) error   { b.settled = fresh; return nil }
func (b *qBatch) QueueWrites(q *pgx.Batch) { q.Queue("select 'writes'") }

type qCredit struct{ tCredit }

func (c *qCredit) Lock(b *qBatch) { b.locked = append(b.locked, c.Account) }
func (c *qCredit) Decide(b *qBatch, env schemas.Envelope) (pipeline.Outcome, error) {
	return (&credit{c.tCredit}).Decide(b.tBatch, env)
}

// TestFrameworkDrivesTheTable: the framework locks every loaded command
// once (a repeated id once), decides the fresh ones in order at their
// stamps, and a Decide's error is the batch's: nothing is written and no
// outcome is returned, so no module can forget to check it.
func TestFrameworkDrivesTheTable(t *testing.T) {
	tb, err := pipeline.NewTableOf(creditCatalog, "toy", "toy.commands", nil, pipeline.Declare[*qBatch, qCredit]("toy.credit"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := func(id, account string) pipeline.Command {
		return pipeline.Command{Env: toyEnv(t, id, "toy.credit", tCredit{Account: account, Amount: 1})}
	}
	b := &qBatch{tBatch: &tBatch{}}
	reads, writes := &pgx.Batch{}, &pgx.Batch{}
	cmds := []pipeline.Command{cmd("c1", "a"), cmd("c1", "a"), cmd("c2", "b"), cmd("c3", "c")}
	l := pipeline.LoadQueued(tb, b, cmds, reads)
	if !slices.Equal(b.locked, []string{"a", "b", "c"}) || reads.Len() != 1 {
		t.Fatalf("locked %v, %d reads", b.locked, reads.Len())
	}
	out, err := l.Decide(context.Background(), []pipeline.Command{cmds[0], cmds[3]}, writes)
	if err != nil || len(out) != 2 || out[1].Status != http.StatusOK || !out[1].DecidedAt.Equal(time.Unix(1, 0)) {
		t.Fatalf("out %+v, err %v", out, err)
	}
	if b.settled != 2 || !slices.Equal(b.at, []string{"c1@0", "c3@1"}) || writes.Len() != 1 {
		t.Fatalf("settled %d, at %v, %d writes", b.settled, b.at, writes.Len())
	}

	b = &qBatch{tBatch: &tBatch{}}
	reads, writes = &pgx.Batch{}, &pgx.Batch{}
	cmds = []pipeline.Command{cmd("c1", "a"), cmd("x1", "broken"), cmd("c2", "b")}
	out, err = pipeline.LoadQueued(tb, b, cmds, reads).Decide(context.Background(), cmds, writes)
	if err == nil || out != nil || writes.Len() != 0 || !slices.Equal(b.decided, []string{"c1"}) {
		t.Fatalf("a failing Decide: out %v, err %v, %d writes, decided %v", out, err, writes.Len(), b.decided)
	}
}

// TestTableChecksTheCatalog: each step of the README's recipe that is
// forgotten fails start-up with an error naming it: a declaration without
// its catalog line, a catalog line without its declaration, a declaration
// on another topic's consumer or with another data type.
func TestTableChecksTheCatalog(t *testing.T) {
	tests := []struct {
		name    string
		catalog []schemas.CommandInfo
		topic   string
		decls   []pipeline.Declaration[*tBatch]
		want    string
	}{
		{"a declaration without its catalog line", creditCatalog, "toy.commands",
			[]pipeline.Declaration[*tBatch]{pipeline.Declare[*tBatch, credit]("toy.credit"), pipeline.Declare[*tBatch, other]("toy.new")},
			"toy.new is declared but schemas.CommandCatalog does not list it"},
		{"a catalog line without its declaration", toyCatalog[:2], "toy.commands",
			[]pipeline.Declaration[*tBatch]{pipeline.Declare[*tBatch, credit]("toy.credit")},
			"lists toy.note on toy.commands but the toy consumer does not declare it"},
		{"a declaration on another topic's consumer", toyCatalog, "toy.commands",
			[]pipeline.Declaration[*tBatch]{pipeline.Declare[*tBatch, credit]("toy.credit"), pipeline.Declare[*tBatch, noting]("toy.note"),
				pipeline.Declare[*tBatch, other]("toy.other"), pipeline.Declare[*tBatch, noting]("elsewhere.cmd")},
			"elsewhere.cmd is declared by the consumer of toy.commands, but schemas.CommandCatalog lists it on elsewhere.commands"},
		{"a declaration of another data type", []schemas.CommandInfo{{Type: "toy.credit", Topic: "toy.commands", Data: note{}}}, "toy.commands",
			[]pipeline.Declaration[*tBatch]{pipeline.Declare[*tBatch, credit]("toy.credit")},
			"neither is nor embeds its catalog data type pipeline_test.note"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pipeline.NewTableOf(tt.catalog, "toy", tt.topic, nil, tt.decls...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := pipeline.NewTableOf(toyCatalog, "toy", "toy.commands", nil, pipeline.Declare[*tBatch, credit]("toy.credit"),
		pipeline.Declare[*tBatch, noting]("toy.note"), pipeline.Declare[*tBatch, other]("toy.other")); err != nil {
		t.Fatalf("a table that agrees with its catalog: %v", err)
	}
}
