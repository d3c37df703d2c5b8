package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateRendered = flag.Bool("update", false, "rewrite compose's rendered files (deploy/patroni)")

// composeRenderings are compose's Patroni and pgBackRest files and the
// values they are rendered with: the one template of each
// (cmd/platform/templates) is what the local cluster renders too.
var composeRenderings = []struct {
	path, kind string
	values     map[string]string
}{
	{"../../deploy/patroni/patroni.yml", "patroni", map[string]string{
		"compose": "1", "scope": "platform", "shared_buffers": "512MB", "wal_keep_size": "1GB"}},
	{"../../deploy/patroni/pgbackrest.conf", "pgbackrest", map[string]string{
		"cipher": "env", "repo": "/var/lib/pgbackrest", "stanza": "platform", "pg_path": "/var/lib/postgresql/data/patroni"}},
}

// TestRenderedComposeFiles: compose's files are the templates' renderings
// (go test ./cmd/platform -run TestRenderedComposeFiles -update rewrites
// them).
func TestRenderedComposeFiles(t *testing.T) {
	for _, r := range composeRenderings {
		want, err := render(r.kind, r.values)
		if err != nil {
			t.Fatalf("render %s: %v", r.kind, err)
		}
		if *updateRendered {
			if err := os.WriteFile(r.path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(r.path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is not `platform render %s` of its values: run go test ./cmd/platform -run TestRenderedComposeFiles -update", r.path, r.kind)
		}
	}
}

// TestRenderNamesMissingValues: a value the template needs and was not
// given is an error naming it, never an empty setting.
func TestRenderNamesMissingValues(t *testing.T) {
	_, err := render("patroni", map[string]string{"scope": "s"})
	if err == nil || !strings.Contains(err.Error(), "compose") && !strings.Contains(err.Error(), "name") {
		t.Fatalf("render without values: %v, want an error naming the missing value", err)
	}
	out, err := render("pgbackrest", map[string]string{"cipher": "none", "repo": "/r", "stanza": "st", "writer": "w",
		"work_dir": "/b", "pg_path": "/d", "pg_port": "5", "pg_socket": "/s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"repo1-path=/r\n", "lock-path=/b/lock\n", "[st]\npg1-path=/d\npg1-port=5\npg1-socket-path=/s\npg1-user=postgres\n"} {
		if !strings.Contains(string(out), l) {
			t.Errorf("rendered pgbackrest lacks %q:\n%s", l, out)
		}
	}
	if strings.Contains(string(out), "cipher-type") {
		t.Errorf("cipher=none renders a cipher:\n%s", out)
	}
}
