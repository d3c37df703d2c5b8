package migrations_test

import (
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fintech/platform/storage/migrations"
)

// indexLine is one entry of index.md: "- NNNN_name.sql: purpose".
var indexLine = regexp.MustCompile(`^- (\d{4}_[a-z0-9_]+\.sql): (\S.*)$`)

// TestIndexNamesEveryMigration keeps index.md the one place that says what
// each migration is for: every embedded file has its line, every line names a
// file, and no two files share a number (goose would refuse them at boot).
func TestIndexNamesEveryMigration(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("index.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded migrations (%v)", err)
	}
	problems := checkIndex(string(raw), files)
	for _, p := range problems {
		t.Error(p)
	}
}

// checkIndex says what is wrong between the index text and the migration
// files.
func checkIndex(index string, files []string) []string {
	var problems []string
	listed := map[string]bool{}
	for i, line := range strings.Split(index, "\n") {
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m := indexLine.FindStringSubmatch(line)
		if m == nil {
			problems = append(problems, "index.md line "+strconv.Itoa(i+1)+" is not \"- NNNN_name.sql: purpose\": "+line)
			continue
		}
		if listed[m[1]] {
			problems = append(problems, "index.md lists "+m[1]+" twice")
		}
		listed[m[1]] = true
	}
	numbers := map[string]string{}
	present := map[string]bool{}
	for _, f := range files {
		present[f] = true
		if !listed[f] {
			problems = append(problems, "migration "+f+" is not in storage/migrations/index.md; add a line \"- "+f+": <what it is for>\"")
		}
		n, _, _ := strings.Cut(f, "_")
		if other, ok := numbers[n]; ok {
			problems = append(problems, "migrations "+other+" and "+f+" share number "+n+"; take the next free one")
		}
		numbers[n] = f
	}
	for f := range listed {
		if !present[f] {
			problems = append(problems, "index.md lists "+f+", which is not a migration file")
		}
	}
	slices.Sort(problems)
	return problems
}

func TestCheckIndex(t *testing.T) {
	t.Parallel()
	index := "# Migrations\n\n- 0001_a.sql: the first\n- 0003_gone.sql: removed since\n- 0004 no colon\n"
	got := checkIndex(index, []string{"0001_a.sql", "0002_b.sql", "0002_c.sql"})
	want := []string{
		"index.md line 5 is not \"- NNNN_name.sql: purpose\": - 0004 no colon",
		"index.md lists 0003_gone.sql, which is not a migration file",
		"migration 0002_b.sql is not in storage/migrations/index.md; add a line \"- 0002_b.sql: <what it is for>\"",
		"migration 0002_c.sql is not in storage/migrations/index.md; add a line \"- 0002_c.sql: <what it is for>\"",
		"migrations 0002_b.sql and 0002_c.sql share number 0002; take the next free one",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkIndex:\n got  %q\n want %q", got, want)
	}
}
