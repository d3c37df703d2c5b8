package main

import (
	"os"
	"os/exec"
	"path/filepath"
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

// TestGroupsAgree: the local cluster (deploy/local/cluster.sh, which asks
// the binary: `platform consume --list`), compose (one service running
// `consume <group>` per group) and the binary run the same consumer groups,
// two processes of each; cluster.sh names no group itself.
func TestGroupsAgree(t *testing.T) {
	binary := groupNames()
	script, err := os.ReadFile("../../deploy/local/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range strings.Split(binary, ", ") {
		if strings.Contains(string(script), g) {
			t.Errorf("cluster.sh names the group %s itself: it asks the binary (platform consume --list)", g)
		}
	}

	// the binary of this tree: PLATFORM_BIN (make sets it) when it is
	// newer than every source here, else built
	dir := t.TempDir()
	bin := os.Getenv("PLATFORM_BIN")
	if bin == "" || !newerThanSources(t, bin) {
		bin = filepath.Join(dir, "platform")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("../../deploy/local/cluster.sh", "addrs")
	cmd.Env = append(os.Environ(), "CLUSTER_DIR="+filepath.Join(dir, "cluster"), "PLATFORM_BIN="+bin, "CLUSTER_GROUPS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cluster.sh addrs: %v\n%s", err, out)
	}
	processes := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, _, _ := strings.Cut(line, " ")
		g, ok := strings.CutSuffix(name, "-1")
		if !ok {
			g, ok = strings.CutSuffix(name, "-2")
		}
		if ok && g != "gateway" && g != "relay" && g != "pg" && !strings.Contains(g, "@") {
			processes[g]++
		}
	}
	var local []string
	for g, n := range processes {
		if n != 2 {
			t.Errorf("the local cluster runs %d processes of %s, want 2", n, g)
		}
		local = append(local, g)
	}
	slices.Sort(local)
	if strings.Join(local, ", ") != binary {
		t.Errorf("the local cluster runs groups %v; the binary %s\n%s", local, binary, out)
	}

	f, _ := readCompose(t)
	var compose []string
	for _, svc := range f.Services {
		if len(svc.Command) == 2 && svc.Command[0] == "consume" {
			compose = append(compose, svc.Command[1])
		}
	}
	slices.Sort(compose)
	if strings.Join(compose, ", ") != binary {
		t.Errorf("compose runs groups %v; the binary %s", compose, binary)
	}
}

// newerThanSources reports whether bin exists and is newer than every file
// of this package.
func newerThanSources(t *testing.T, bin string) bool {
	fi, err := os.Stat(bin)
	if err != nil {
		return false
	}
	files, _ := filepath.Glob("*.go")
	tmpl, _ := filepath.Glob("templates/*")
	for _, f := range append(files, tmpl...) {
		if st, err := os.Stat(f); err != nil || st.ModTime().After(fi.ModTime()) {
			return false
		}
	}
	return true
}
