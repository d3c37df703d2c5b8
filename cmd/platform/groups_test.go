package main

import (
	"strings"
	"testing"

	"github.com/fintech/platform/topics"
)

// TestGroupNames checks that `platform consume` offers exactly the consumer
// groups the registered modules run, read from the modules themselves.
func TestGroupNames(t *testing.T) {
	t.Parallel()
	want := []string{topics.GroupFiat, topics.GroupLedger, topics.GroupMask, topics.GroupReputation,
		topics.GroupSink, topics.GroupTrade, topics.GroupWebhooks}
	got := groupNames()
	for _, g := range want {
		if !strings.Contains(", "+got+", ", ", "+g+", ") {
			t.Errorf("groupNames() = %q lacks %s", got, g)
		}
	}
	if n := len(strings.Split(got, ", ")); n != len(want) {
		t.Errorf("groupNames() = %q: %d groups, want %d", got, n, len(want))
	}
	if got := moduleGroups([]module{{groups: map[string]func() (runnable, error){"b": nil, "a": nil}},
		{groups: map[string]func() (runnable, error){"c": nil}}}); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("moduleGroups = %v, want sorted a,b,c", got)
	}
}
