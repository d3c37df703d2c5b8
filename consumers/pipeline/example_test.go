package pipeline_test

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// tallies is the state of one batch of the example module: the tallies its
// commands lock, and their values once read.
type tallies struct {
	locked []string
	value  map[string]int64
}

// tallyData is the example command's data, as schemas would declare it.
type tallyData struct {
	Counter string `json:"counter"`
	Amount  int64  `json:"amount"`
}

// Validate refuses a data the gateway would never publish.
func (d tallyData) Validate() error {
	if d.Amount <= 0 {
		return errors.New("amount must be positive")
	}
	return nil
}

// tallyAdd applies one tally.add command: it embeds the data type, so the
// command's data decodes into it and Validate checks it.
type tallyAdd struct{ tallyData }

func (c *tallyAdd) Lock(b *tallies) { b.locked = append(b.locked, c.Counter) }

func (c *tallyAdd) Decide(b *tallies, _ schemas.Envelope) (pipeline.Outcome, error) {
	b.value[c.Counter] += c.Amount
	return pipeline.JSON(http.StatusOK, map[string]int64{"value": b.value[c.Counter]}), nil
}

// A module declares each command type once, with the type that applies it,
// and the table checks the declarations against the command catalog (here
// the example's own; a module's is schemas.CommandCatalog, via NewTable);
// the table decodes a command into it, or answers 400 invalid_command for
// one it cannot read (an undeclared type, data that fails Validate). The
// applier locks what every command of the batch asks for, then decides
// each in order.
func ExampleDeclare() {
	catalog := []schemas.CommandInfo{{Type: "tally.add", Topic: "tally.commands", Data: tallyData{}}}
	table, err := pipeline.NewTableOf(catalog, "tally", "tally.commands", nil,
		pipeline.Declare[*tallies, tallyAdd]("tally.add"))
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	envelope := func(typ string, data tallyData) schemas.Envelope {
		env, err := schemas.New(typ, data.Counter, "user-1", data, now)
		if err != nil {
			panic(err)
		}
		return env
	}
	cmds := []pipeline.Command{
		{Env: envelope("tally.add", tallyData{Counter: "c1", Amount: 5})},
		{Env: envelope("tally.add", tallyData{Counter: "c1", Amount: 2})},
		{Env: envelope("tally.add", tallyData{Counter: "c2", Amount: -1})},
		{Env: envelope("tally.sub", tallyData{Counter: "c1", Amount: 1})},
	}
	b := &tallies{value: map[string]int64{}}
	deciders := table.DecodeAll(cmds)
	for _, d := range deciders {
		d.Lock(b)
	}
	fmt.Println("locked:", b.locked)
	for i, d := range deciders {
		out, err := d.Decide(b, cmds[i].Env)
		if err != nil {
			fmt.Println("the batch stops:", err)
			return
		}
		fmt.Println(out.Status, string(out.Body))
	}
	fmt.Println("declared:", table.Types())
	// Output:
	// locked: [c1 c1]
	// 200 {"value":5}
	// 200 {"value":7}
	// 400 {"error":"invalid_command","message":"the command could not be read: amount must be positive"}
	// 400 {"error":"invalid_command","message":"the command could not be read: tally consumer does not handle \"tally.sub\""}
	// declared: [tally.add]
}
