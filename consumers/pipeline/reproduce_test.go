package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestPassesReproducesAcrossPartitions decides a ring of transfers whose
// partitions come in the wrong order: each hop can pay only once the hop
// before it (another partition) credited its wallet. Passes decides every
// re-applied hop as it was recorded, and holds back what cannot be yet.
func TestPassesReproducesAcrossPartitions(t *testing.T) {
	ok := &Recorded{Status: 200}
	hop := func(part int32, off int64) Command {
		return Command{Topic: "t", Partition: part, Offset: off, Recorded: &Recorded{Status: ok.Status}}
	}
	tests := []struct {
		name string
		// cmds are hops: partition p pays from wallet p to wallet p+1 (the
		// last one pays nobody).
		cmds     []Command
		balances []int
		decided  []int32 // the partitions in the order they paid
		held     []int   // the indices held back
	}{
		{name: "blocks in reverse order", cmds: []Command{hop(2, 0), hop(1, 0), hop(0, 0)}, balances: []int{1, 0, 0},
			decided: []int32{0, 1, 2}},
		{name: "a hop whose money never comes is held, with what follows it on its partition",
			cmds: []Command{hop(1, 0), hop(1, 1), hop(0, 0)}, balances: []int{0, 0, 0}, held: []int{0, 1, 2}},
		{name: "first application: in order, rejections included", cmds: []Command{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0}},
			balances: []int{1, 0}, decided: []int32{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bal := slices.Clone(tt.balances)
			var paid []int32
			out, err := Passes(tt.cmds, func(i int) (Outcome, error) {
				p := tt.cmds[i].Partition
				if bal[p] == 0 {
					return Outcome{Status: 400}, nil
				}
				bal[p]--
				if int(p)+1 < len(bal) {
					bal[p+1]++
				}
				paid = append(paid, p)
				return Outcome{Status: 200}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var held []int
			for i, o := range out {
				if o.Held {
					held = append(held, i)
				}
			}
			if !slices.Equal(paid, tt.decided) || !slices.Equal(held, tt.held) {
				t.Fatalf("paid %v held %v, want %v and %v", paid, held, tt.decided, tt.held)
			}
		})
	}
}

// TestPassesStopsOnAnotherSuccess: a re-applied command that decides a
// success other than its recorded one is a *DivergedError naming both.
func TestPassesStopsOnAnotherSuccess(t *testing.T) {
	cmds := []Command{{Topic: "t", Recorded: &Recorded{Status: 201, Body: []byte(`{"a":1}`)}}}
	cmds[0].Env.ID = "c1"
	_, err := Passes(cmds, func(int) (Outcome, error) { return Outcome{Status: 200, Body: []byte(`{"b":2}`)}, nil })
	var div *DivergedError
	if !errors.As(err, &div) || div.CommandID != "c1" {
		t.Fatalf("err = %v, want a DivergedError naming c1", err)
	}
	if msg := fmt.Sprint(err); !containsAll(msg, "c1", `201 {"a":1}`, `200 {"b":2}`) {
		t.Fatalf("message %q does not name the command and both outcomes", msg)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestRejectionThatWritesIsDecidedAgain: a re-applied command recorded with
// a rejection is answered its record without being decided, unless the
// handler says a rejection of its status writes (a declined mask charge is
// a row): then it is decided again, like a success.
func TestRejectionThatWritesIsDecidedAgain(t *testing.T) {
	cmd := func(id string, rec *Recorded) Command {
		c := Command{Topic: "t", Recorded: rec}
		c.Env.ID = id
		return c
	}
	s := sortOut([]Command{
		cmd("declined", &Recorded{Status: 402, writes: true}),
		cmd("refused", &Recorded{Status: 400}),
		cmd("paid", &Recorded{Status: 201}),
		cmd("new", nil),
	}, nil)
	var fresh []string
	for _, c := range s.fresh {
		fresh = append(fresh, c.Env.ID)
	}
	if want := []string{"declined", "paid", "new"}; !slices.Equal(fresh, want) {
		t.Fatalf("decided %v, want %v", fresh, want)
	}
	if len(s.reproduced) != 1 || s.cmds[s.reproduced[0]].Env.ID != "refused" {
		t.Fatalf("answered from the record: %v, want [refused]", s.reproduced)
	}
}
