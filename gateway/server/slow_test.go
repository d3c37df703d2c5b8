package server

import (
	"fmt"
	"testing"
	"time"
)

func TestSlowLogKeepsTheLatestSlowOnes(t *testing.T) {
	l := &slowLog{threshold: 100 * time.Millisecond}
	l.note(SlowRequest{Route: "fast", Took: 99 * time.Millisecond})
	for i := range slowKept + 7 {
		l.note(SlowRequest{Route: fmt.Sprint(i), Took: 100 * time.Millisecond})
	}
	got := l.list()
	if len(got) != slowKept {
		t.Fatalf("kept %d, want %d", len(got), slowKept)
	}
	for i, r := range got {
		if want := fmt.Sprint(slowKept + 6 - i); r.Route != want {
			t.Fatalf("entry %d is %q, want %q (newest first, the fast one never)", i, r.Route, want)
		}
	}
	var none *slowLog
	none.note(SlowRequest{Took: time.Hour})
	if none.list() != nil {
		t.Fatal("a server without a slow log listed requests")
	}
}
