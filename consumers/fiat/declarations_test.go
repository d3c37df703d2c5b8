package fiat_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

// TestDeclarationsCoverFiatCommands: the handler starts (NewTable checks
// its declarations against schemas.CommandCatalog both ways) and declares
// exactly the catalog's commands of fiat.commands.
func TestDeclarationsCoverFiatCommands(t *testing.T) {
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range schemas.CommandCatalog() {
		if c.Topic == topics.FiatCommands {
			want = append(want, c.Type)
		}
	}
	if len(want) < 11 || !slices.Equal(slices.Sorted(slices.Values(h.Types())), slices.Sorted(slices.Values(want))) {
		t.Fatalf("declared %v, the catalog lists %v", h.Types(), want)
	}
}

// TestUnreadableCommands: a type without a declaration, data that does not
// decode and data that fails its type's Validate are each answered 400
// invalid_command, beside the batch's other commands, and change nothing.
func TestUnreadableCommands(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fund(t, pool, "ra", 10_000), fund(t, pool, "rb", 0)
	camp := campaign(t, pool, 1_000, nil)
	invalid := donateCmd(t, camp, a, "ra", 0, false) // amountKzt must be positive
	garbled := transferCmd(t, a, b, "ra", "rb", 1)
	garbled.Env.Data = []byte(`{"amount":"ten"}`)
	unknown := command(t, "fiat.unknown", a, map[string]any{})
	outs := applyBatch(t, pool, h, []pipeline.Command{invalid, garbled, unknown, transferCmd(t, a, b, "ra", "rb", 100)})
	for i, o := range outs[:3] {
		if o.Status != http.StatusBadRequest || errCode(o) != schemas.CodeInvalidCommand || len(o.Emit) != 0 {
			t.Fatalf("command %d: %d %s, want 400 invalid_command", i, o.Status, o.Body)
		}
	}
	if outs[3].Status != http.StatusOK || balance(t, pool, b) != 100 {
		t.Fatalf("the readable transfer: %d %s", outs[3].Status, outs[3].Body)
	}
}
