package pipeline_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// deposited is a toy consumer's reading of another module's event: it
// needs the record's actor before it locks (pipeline.Enveloped).
type deposited struct {
	schemas.DepositCompleted
	actor string
}

func (d *deposited) Bind(env schemas.Envelope) { d.actor = env.ActorUserID }

func (d *deposited) Lock(b *tBatch) { b.locked = append(b.locked, d.actor+":"+d.WalletID) }

func (d *deposited) Decide(b *tBatch, env schemas.Envelope) (pipeline.Outcome, error) {
	b.decided = append(b.decided, env.ID)
	return pipeline.Outcome{Status: http.StatusCreated, Body: []byte(`{"x":1}`),
		Emit: []pipeline.Emission{{Topic: "toy.events", Env: env}}}, nil
}

// TestTableReadsDeclaredEvents: a record of an event topic the table
// declares an event of is read by its declaration (with its envelope) and
// answers nobody — 200, no body, unrecorded, with what it emits; an event
// of another type or topic, or whose data does not read, is answered so
// and changes nothing; the same type on the command topic is a command the
// table cannot read (400 invalid_command). Event declarations are checked
// against schemas.EventCatalog.
func TestTableReadsDeclaredEvents(t *testing.T) {
	tb, err := pipeline.NewTableOf(creditCatalog, "toy", "toy.commands", nil,
		pipeline.Declare[*tBatch, credit]("toy.credit"),
		pipeline.DeclareEvent[*tBatch, deposited]("events.fiat", schemas.TypeDepositCompleted))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tb.Types(), []string{"toy.credit"}) || !slices.Equal(tb.EventTopics(), []string{"events.fiat"}) {
		t.Fatalf("types %v, event topics %v", tb.Types(), tb.EventTopics())
	}
	rec := func(id, topic, typ string, data any) pipeline.Command {
		env := toyEnv(t, id, typ, data)
		env.ActorUserID = "alice"
		return pipeline.Command{Env: env, Topic: topic}
	}
	bad := rec("e3", "events.fiat", schemas.TypeDepositCompleted, nil)
	bad.Env.Data = json.RawMessage(`{"amount": "many"}`)
	cmds := []pipeline.Command{
		rec("e1", "events.fiat", schemas.TypeDepositCompleted, schemas.DepositCompleted{WalletID: "w1", Amount: 5}),
		rec("e2", "events.fiat", schemas.TypeTransferCompleted, schemas.TransferCompleted{ToWallet: "w2"}),
		bad,
		rec("e4", "events.gov", schemas.TypeDepositCompleted, schemas.DepositCompleted{WalletID: "w4"}),
		rec("c1", "toy.commands", schemas.TypeDepositCompleted, schemas.DepositCompleted{WalletID: "w5"}),
		rec("c2", "toy.commands", "toy.credit", tCredit{Account: "a", Amount: 1}),
	}
	b := &tBatch{}
	ds := tb.DecodeAll(cmds)
	for _, d := range ds {
		d.Lock(b)
	}
	if !slices.Equal(b.locked, []string{"alice:w1", "a"}) {
		t.Fatalf("locked %v, want the declared event's (with its actor) and the command's", b.locked)
	}
	out := make([]pipeline.Outcome, len(cmds))
	for i, d := range ds {
		if out[i], err = d.Decide(b, cmds[i].Env); err != nil {
			t.Fatal(err)
		}
	}
	if o := out[0]; o.Status != http.StatusOK || o.Body != nil || !o.Unrecorded || len(o.Emit) != 1 {
		t.Fatalf("the declared event answered %d %s unrecorded=%v with %d emissions, want 200, no body, unrecorded, 1",
			o.Status, o.Body, o.Unrecorded, len(o.Emit))
	}
	for i := 1; i <= 3; i++ {
		if o := out[i]; o.Status != http.StatusOK || o.Body != nil || !o.Unrecorded || len(o.Emit) != 0 {
			t.Fatalf("event record %d answered %d %s unrecorded=%v, want 200, no body, unrecorded", i, o.Status, o.Body, o.Unrecorded)
		}
	}
	if o := out[4]; o.Status != http.StatusBadRequest || !strings.Contains(string(o.Body), schemas.CodeInvalidCommand) {
		t.Fatalf("an event type on the command topic answered %d %s, want 400 invalid_command", o.Status, o.Body)
	}
	if out[5].Status != http.StatusOK || !slices.Equal(b.decided, []string{"e1", "c2"}) {
		t.Fatalf("command answered %d, decided %v", out[5].Status, b.decided)
	}

	for _, tt := range []struct {
		name string
		decl pipeline.Declaration[*tBatch]
		want string
	}{
		{"an event the catalog does not list", pipeline.DeclareEvent[*tBatch, deposited]("events.fiat", "fiat.nonsense"),
			"event fiat.nonsense is declared but schemas.EventCatalog does not list it"},
		{"an event on another module's topic", pipeline.DeclareEvent[*tBatch, deposited]("events.gov", schemas.TypeDepositCompleted),
			"is declared on events.gov, but schemas.EventCatalog lists it of module fiat"},
		{"an event of another data type", pipeline.DeclareEvent[*tBatch, credit]("events.fiat", schemas.TypeDepositCompleted),
			"neither is nor embeds its catalog data type schemas.DepositCompleted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pipeline.NewTableOf(creditCatalog, "toy", "toy.commands", nil, pipeline.Declare[*tBatch, credit]("toy.credit"), tt.decl)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
