package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpListsEveryCommand: `platform help` (and -h, --help) names every
// command of the table, and an unknown command is refused with it.
func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		stdout, stderr, code := captureRun(t, args)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		stderr += stdout
		for _, c := range subcommands {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + `\b`).MatchString(stderr) {
				t.Errorf("%v does not list %q:\n%s", args, c.name, stderr)
			}
		}
	}
	if _, stderr, code := captureRun(t, []string{"frobnicate"}); code != 2 || !strings.Contains(stderr, "  version ") {
		t.Errorf("unknown command: exit %d, %q", code, stderr)
	}
}

// TestEveryCommandReadsTheEnvFile: every command takes --env-file (before or
// after its arguments) and reads it: a named file that does not exist
// stops each one, naming the file, never "flag provided but not defined".
func TestEveryCommandReadsTheEnvFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.env")
	for _, c := range subcommands {
		for _, args := range [][]string{{c.name, "--env-file", missing}, {"--env-file=" + missing, c.name}} {
			_, stderr, code := captureRun(t, args)
			if code != 2 || !strings.Contains(stderr, "env file: open "+missing) || strings.Contains(stderr, "not defined") {
				t.Errorf("%v: exit %d, %q; want the env file named", args, code, stderr)
			}
		}
	}
	// and a file that exists is taken by the commands that need none
	file := filepath.Join(t.TempDir(), "platform.env")
	if err := os.WriteFile(file, []byte("PLATFORM_ENV=development\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"version"}, {"help"}, {"consume", "--list"}, {"envfile", "secrets"},
		{"render", "pgbackrest", "cipher=env", "repo=/r", "stanza=s"}} {
		stdout, stderr, code := captureRun(t, append(args, "--env-file", file))
		if code != 0 || (args[0] != "help" && stdout == "") {
			t.Errorf("%v --env-file: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	// verify takes its DATABASE_URL from the file
	if err := os.WriteFile(file, []byte("DATABASE_URL=postgres://127.0.0.1:1/none?connect_timeout=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATABASE_URL", "")
	if _, stderr, code := captureRun(t, []string{"verify", "--env-file", file}); code != 1 || !strings.Contains(stderr, "DATABASE_URL") {
		t.Errorf("verify --env-file: exit %d, %q; want it to try the file's database", code, stderr)
	}
}

// TestConsumeList: `platform consume --list` prints the groups the binary
// runs, one a line, with no configuration at all.
func TestConsumeList(t *testing.T) {
	t.Setenv("PLATFORM_ENV", "production")
	stdout, stderr, code := captureRun(t, []string{"consume", "--list", "--env-file", "none"})
	if code != 0 || strings.Join(strings.Fields(stdout), ", ") != groupNames() {
		t.Fatalf("consume --list: exit %d, %q (stderr %q); want %s", code, stdout, stderr, groupNames())
	}
	if _, _, code := captureRun(t, []string{"consume", "--list", "fiat-applier", "--env-file", "none"}); code != 2 {
		t.Errorf("consume --list with a group: exit %d, want 2", code)
	}
}

// TestEnvFileSecrets: `platform envfile secrets` prints every generated
// secret of the table, fresh each time, each passing its production format.
func TestEnvFileSecrets(t *testing.T) {
	a, err := secretLines()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := secretLines()
	vars, err := parseEnvFile(strings.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secretTable {
		v, ok := vars[s.name]
		if ok != s.generated {
			t.Errorf("%s printed: %v, generated: %v", s.name, ok, s.generated)
		}
		if ok {
			if p := formatProblem(s.format, v); p != "" {
				t.Errorf("%s=%s %s", s.name, v, p)
			}
			if strings.Contains(b, v) {
				t.Errorf("%s is the same twice", s.name)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "secrets.env")
	if _, _, code := captureRun(t, []string{"envfile", "secrets", path, "--env-file", "none"}); code != 0 {
		t.Fatalf("envfile secrets PATH: exit %d", code)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("envfile secrets PATH: %v %v, want mode 600", fi, err)
	}
}

// TestSecretTableCoversCode: every secret the code reads is in secretTable:
// the secret-like names quoted in this command's code, and those any
// package reads from the environment itself; and every entry kept in
// Config is read by LoadConfig.
func TestSecretTableCoversCode(t *testing.T) {
	secretName := `[A-Z][A-Z0-9_]*(?:SECRET|_KEY|SALT|PASSWORD|TOKEN)`
	quoted := regexp.MustCompile(`"(` + secretName + `)"`)
	getenv := regexp.MustCompile(`(?:Getenv|LookupEnv|getenv)\("(` + secretName + `)"\)`)
	inTable := map[string]bool{}
	for _, s := range secretTable {
		if inTable[s.name] {
			t.Errorf("%s is twice in secretTable", s.name)
		}
		inTable[s.name] = true
	}
	var seen []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "e2e" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		re := getenv
		if filepath.Dir(path) == filepath.Join("..", "..", "cmd", "platform") {
			re = quoted // this command: every quoted name
		}
		for _, m := range re.FindAllSubmatch(src, -1) {
			name := string(m[1])
			seen = append(seen, name)
			if !inTable[name] {
				t.Errorf("%s reads %s, which secretTable does not declare (variable, format, why)", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(seen, "JWT_SECRET") {
		t.Fatalf("the scan found no JWT_SECRET: it looked at nothing (%d names)", len(seen))
	}
	read := map[string]bool{}
	_, _ = LoadConfig(func(k string) string { read[k] = true; return "" })
	for _, s := range secretTable {
		if s.field != nil && !read[s.name] {
			t.Errorf("LoadConfig does not read %s", s.name)
		}
		if s.why == "" {
			t.Errorf("%s: no why", s.name)
		}
		if (s.required || s.generated || s.fingerprinted) && s.field == nil {
			t.Errorf("%s is required, generated or fingerprinted but kept nowhere", s.name)
		}
	}
}

// TestCommandDocs: the package documentation and the README's subcommand
// table name every command of the table, and nothing else.
func TestCommandDocs(t *testing.T) {
	var names []string
	for _, c := range subcommands {
		names = append(names, c.name)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src[:strings.Index(string(src), "package main")])
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z]+)\s`).FindAllStringSubmatch(doc, -1) {
		documented = append(documented, m[1])
	}
	if !slices.Equal(documented, names) {
		t.Errorf("main.go's package comment lists %v; the subcommands are %v", documented, names)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.Contains(string(readme), "| `platform "+n) {
			t.Errorf("README's subcommand table has no `platform %s` row", n)
		}
	}
}

// TestProductionNeedsFromTable: the operator commands need only what they
// use; the serving ones everything; an unknown name everything.
func TestProductionNeedsFromTable(t *testing.T) {
	for cmd, want := range map[string][]string{"admin": {"DATABASE_URL"}, "topics": {}, "run": nil, "nope": nil,
		"migrate": {"DATABASE_URL", "DATA_ENCRYPTION_KEY", "SIGNING_MASTER_KEY", "LEDGER_SALT"}} {
		got := productionNeeds(cmd)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("productionNeeds(%s) = %#v, want %#v", cmd, got, want)
		}
	}
}
