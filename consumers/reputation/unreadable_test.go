package reputation

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestBadDataAnswersAsOnEveryTable: a record of reputation.commands that
// cannot be read — fields out of bounds, a meta too large, data that does
// not decode, a type the applier does not take there (even one it derives
// from on an event topic) — answers what every table answers
// (pipeline.Unreadable: 400 invalid_command), writes nothing, and does not
// stop the good command of the same batch.
func TestBadDataAnswersAsOnEveryTable(t *testing.T) {
	pool, apply := applyOn(t, "u1")
	ctx := context.Background()
	cmd := func(typ string, data any) pipeline.Command {
		return eventCmd(t, topics.ReputationCommands, typ, "u1", "", data, time.Now())
	}
	raw := cmd(schemas.TypeReputationEvent, nil)
	raw.Env.Data = json.RawMessage(`{"userId": "u1", "kind": "k", "weight": "1"}`)
	out := apply(
		cmd(schemas.TypeReputationEvent, schemas.ReputationEvent{UserID: "u1", Kind: "k", SourceModule: "m", Weight: 1001}),
		cmd(schemas.TypeReputationEvent, schemas.ReputationEvent{UserID: "u1", SourceModule: "m", Weight: 1}),
		cmd(schemas.TypeReputationEvent, schemas.ReputationEvent{UserID: "u1", Kind: "k", SourceModule: "m", Weight: 1,
			Meta: map[string]any{"x": strings.Repeat("x", schemas.ReputationMaxMeta)}}),
		raw,
		cmd(schemas.TypeTransferCompleted, schemas.TransferCompleted{TxID: "tx1", ToWallet: "w", AmountKzt: 5_000}),
		cmd("reputation.nonsense", map[string]any{"userId": "u1"}),
		cmd(schemas.TypeReputationEvent, schemas.ReputationEvent{UserID: "u1", Kind: "k", SourceModule: "m", Weight: 3, SourceID: "s1"}),
	)
	table := pipeline.Unreadable("x") // the answer of every table
	var want schemas.ErrorBody
	if err := json.Unmarshal(table.Body, &want); err != nil || table.Status != http.StatusBadRequest || want.Error != schemas.CodeInvalidCommand {
		t.Fatalf("the tables answer %d %s (%v), want 400 invalid_command", table.Status, table.Body, err)
	}
	for i, o := range out[:len(out)-1] {
		var got schemas.ErrorBody
		if err := json.Unmarshal(o.Body, &got); err != nil || o.Status != table.Status || got.Error != want.Error {
			t.Errorf("bad record %d answered %d %s, want %d %s as on every table", i, o.Status, o.Body, table.Status, want.Error)
		}
		if len(o.Emit) != 0 || o.Unrecorded {
			t.Errorf("bad record %d emitted %d events, unrecorded=%v: want nothing, recorded", i, len(o.Emit), o.Unrecorded)
		}
	}
	if o := out[len(out)-1]; o.Status != http.StatusCreated || len(o.Emit) != 1 {
		t.Fatalf("the good command of the batch answered %d %s with %d events, want 201 and score.updated", o.Status, o.Body, len(o.Emit))
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM reputation_events`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d reputation events written, want the good command's 1 (%v)", n, err)
	}
}
