package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestModuleRegistration checks every place a module touches against the
// modules registered in moduleWirings, so that registering a module and
// forgetting one of them fails here (README "Adding a module"):
//   - the consumer groups the modules run are exactly topics.Groups();
//   - the README's `platform consume` row names exactly those groups;
//   - every ledger kind a module emits (schemas.ModuleLedgerKinds) is
//     re-anchored by exactly one `platform ledger reanchor` source, and no
//     source re-anchors a kind no module emits.
func TestModuleRegistration(t *testing.T) {
	t.Parallel()
	want := slices.Sorted(slices.Values(topics.Groups()))
	if got := strings.Split(groupNames(), ", "); !slices.Equal(got, want) {
		t.Errorf("the registered modules run groups %v; topics.Groups() = %v", got, want)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `platform consume <group>` \\|(.*)\\|$").FindSubmatch(readme)
	if row == nil {
		t.Fatal("README has no `platform consume <group>` row in its subcommand table")
	}
	var documented []string
	for _, m := range regexp.MustCompile("`([a-z-]+)`").FindAllSubmatch(row[1], -1) {
		documented = append(documented, string(m[1]))
	}
	slices.Sort(documented)
	if !slices.Equal(documented, want) {
		t.Errorf("README's `platform consume` row lists %v, the modules run %v", documented, want)
	}

	covered := map[string]string{}
	for _, s := range ledgerSources() {
		if len(s.Kinds()) == 0 {
			t.Errorf("reanchor source %q declares no entry kinds", s.Name())
		}
		for _, k := range s.Kinds() {
			if prev, dup := covered[k]; dup {
				t.Errorf("kind %s is re-anchored by both %q and %q", k, prev, s.Name())
			}
			covered[k] = s.Name()
		}
	}
	emitted := schemas.ModuleLedgerKinds()
	for _, k := range emitted {
		if covered[k] == "" {
			t.Errorf("ledger kind %s has no `platform ledger reanchor` source", k)
		}
	}
	for k, src := range covered {
		if !slices.Contains(emitted, k) {
			t.Errorf("reanchor source %q covers %s, which no module emits", src, k)
		}
	}
}

// TestModuleGroupsSorted checks the order `platform consume` lists groups in.
func TestModuleGroupsSorted(t *testing.T) {
	t.Parallel()
	if got := moduleGroups([]module{{groups: map[string]func() (runnable, error){"b": nil, "a": nil}},
		{groups: map[string]func() (runnable, error){"c": nil}}}); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("moduleGroups = %v, want sorted a,b,c", got)
	}
}
