package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// writeEnv writes an env file with the given mode.
func writeEnv(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func lookupOf(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestEnvFileLookup: the flag beats PLATFORM_ENV_FILE, which beats
// $DATA_DIR/platform.env, which beats ./.data/platform.env; an explicit
// file must exist, an implicit one is read only when present, "none" reads
// nothing, a file others can read is refused, and a set variable of the
// real environment wins over the file.
func TestEnvFileLookup(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for name, port := range map[string]string{"flag.env": "1", "envvar.env": "2", "dd/platform.env": "3", ".data/platform.env": "4"} {
		writeEnv(t, filepath.Join(dir, name), "# test\nKAFKA_EMBEDDED_PORT="+port+"\nexport LOG_LEVEL='de'\\''bug'\n", 0o600)
	}
	tests := []struct {
		name     string
		flag     string
		flagSet  bool
		env      map[string]string
		wantPort string // "" = no file read
		wantErr  string
	}{
		{"flag", "flag.env", true, map[string]string{"PLATFORM_ENV_FILE": "envvar.env", "DATA_DIR": "dd"}, "1", ""},
		{"PLATFORM_ENV_FILE", "", false, map[string]string{"PLATFORM_ENV_FILE": "envvar.env", "DATA_DIR": "dd"}, "2", ""},
		{"DATA_DIR", "", false, map[string]string{"DATA_DIR": "dd"}, "3", ""},
		{"cwd .data", "", false, nil, "4", ""},
		{"DATA_DIR without a file reads none", "", false, map[string]string{"DATA_DIR": "empty"}, "", ""},
		{"none", "none", true, nil, "", ""},
		{"explicit missing file", "nope.env", true, nil, "", "no such file"},
		{"real environment wins", "flag.env", true, map[string]string{"KAFKA_EMBEDDED_PORT": "9"}, "9", ""},
		{"empty real variable does not hide the file", "flag.env", true, map[string]string{"KAFKA_EMBEDDED_PORT": " "}, "1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := loadEnvSource(tt.flag, tt.flagSet, lookupOf(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := src.getenv("KAFKA_EMBEDDED_PORT"); got != tt.wantPort {
				t.Fatalf("KAFKA_EMBEDDED_PORT = %q, want %q (file %q)", got, tt.wantPort, src.path)
			}
			if tt.wantPort != "" && tt.wantPort != "9" && src.getenv("LOG_LEVEL") != "de'bug" {
				t.Fatalf("quoted value = %q", src.getenv("LOG_LEVEL"))
			}
		})
	}
	writeEnv(t, filepath.Join(dir, "open.env"), "LOG_LEVEL=debug\n", 0o644)
	if _, err := loadEnvSource("open.env", true, lookupOf(nil)); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable env file: err = %v, want a refusal", err)
	}
}

// TestEnvFileWrite: `platform envfile write` records the configuration
// variables set in the environment, only those, with mode 0600, in a form
// the reader gives back unchanged.
func TestEnvFileWrite(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"PLATFORM_ENV":        "development",
		"DATABASE_URL":        "postgres://postgres@127.0.0.1:56301/platform?sslmode=disable",
		"KAFKA_EMBEDDED_PORT": "56304",
		"FIAT_ADMIN_EMAILS":   "ops@example.com, it's@example.com",
		"HOME":                "/home/someone", // not configuration: not recorded
	}
	path := filepath.Join(t.TempDir(), "d", "platform.env")
	if err := cmdEnvFile([]string{"write", path}, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", st.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseEnvFile(f)
	if err != nil {
		t.Fatal(err)
	}
	delete(env, "HOME")
	if len(got) != len(env) {
		t.Fatalf("recorded %v, want %v", got, env)
	}
	for k, v := range env {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestTargetLine: the line names host:port/db (never the password) and
// the broker, embedded or external, and the env file read.
func TestTargetLine(t *testing.T) {
	t.Parallel()
	cfg := Config{DatabaseURL: "postgres://u:s3cret@127.0.0.1:56301/platform?sslmode=disable", KafkaPort: 56304, Environment: "development"}
	line := targetLine(cfg, envSource{path: "/x/.data/platform.env"})
	want := "platform: database 127.0.0.1:56301/platform, broker 127.0.0.1:56304 embedded (KAFKA_EMBEDDED_PORT) (development, settings: environment, then /x/.data/platform.env)"
	if line != want {
		t.Fatalf("line\n%s\nwant\n%s", line, want)
	}
	if strings.Contains(line, "s3cret") || strings.Contains(line, "\n") {
		t.Fatalf("line leaks the password or spans lines: %q", line)
	}
	cfg.KafkaBrokers = []string{"k1:9092", "k2:9092"}
	if line := targetLine(cfg, envSource{}); !strings.Contains(line, "broker k1:9092,k2:9092 (") || !strings.HasSuffix(line, "settings: environment only)") {
		t.Fatalf("external brokers: %q", line)
	}
}

// TestOperatorCommandsNeedOnlyTheDatabase: in production, admin, dlq and
// ledger need DATABASE_URL only (verify loads no configuration: it reads
// DATABASE_URL itself) and migrate also the data key,
// while the serving commands still demand every secret.
func TestOperatorCommandsNeedOnlyTheDatabase(t *testing.T) {
	t.Parallel()
	dbOnly := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x"}
	get := func(env map[string]string) func(string) string { return func(k string) string { return env[k] } }
	for _, cmd := range []string{"admin", "dlq", "ledger"} {
		if _, err := LoadConfigFor(cmd, get(dbOnly)); err != nil {
			t.Errorf("%s with DATABASE_URL only: %v", cmd, err)
		}
		if _, err := LoadConfigFor(cmd, get(nil)); err == nil || oneLine(err) != "DATABASE_URL: required in production: the Postgres DSN (PLATFORM_ENV is production unless set to development)" {
			t.Errorf("%s without DATABASE_URL: %v", cmd, err)
		}
	}
	if _, err := LoadConfigFor("migrate", get(dbOnly)); err == nil || strings.Contains(oneLine(err), "JWT_SECRET") ||
		!strings.Contains(err.Error(), "DATA_ENCRYPTION_KEY:") || !strings.Contains(err.Error(), "SIGNING_MASTER_KEY:") || !strings.Contains(err.Error(), "LEDGER_SALT:") {
		t.Errorf("migrate without its keys: %v", err)
	}
	for _, cmd := range []string{"run", "gateway", "consume", "relay"} {
		_, err := LoadConfigFor(cmd, get(dbOnly))
		if err == nil || !strings.Contains(oneLine(err), "JWT_SECRET: required in production") {
			t.Errorf("%s with DATABASE_URL only: %v, want the serving secrets demanded", cmd, err)
		}
	}
}

// TestRoleReport: admin verify names the allowlists the address is on,
// says "user" only when it read allowlists, and says it cannot tell when it
// read none (the server's environment decides).
func TestRoleReport(t *testing.T) {
	t.Parallel()
	lists := Config{Admins: auth.Admins{Fiat: auth.ParseAllowlist("ops@x.io"), Gov: auth.ParseAllowlist("ops@x.io")}, AdminListsSet: true}
	if got := roleReport(lists, "OPS@x.io"); got != "role now: admin (on FIAT_ADMIN_EMAILS, GOV_ADMIN_EMAILS)" {
		t.Errorf("on two lists: %q", got)
	}
	if got := roleReport(lists, "a@x.io"); !strings.HasPrefix(got, "role now: user") {
		t.Errorf("on none: %q", got)
	}
	if got := roleReport(Config{}, "ops@x.io"); !strings.HasPrefix(got, "role: cannot tell here") {
		t.Errorf("no allowlists read: %q", got)
	}
	cfg, err := LoadConfigFor("admin", func(k string) string {
		return map[string]string{"PLATFORM_ENV": "development", "CHARITY_ADMIN_EMAILS": "c@x.io"}[k]
	})
	if err != nil || !cfg.AdminListsSet {
		t.Fatalf("CHARITY_ADMIN_EMAILS set: AdminListsSet = %v, err %v", cfg.AdminListsSet, err)
	}
}

// TestMigrateFromASecondShell is the scenario: a shell with no
// DATABASE_URL and no PLATFORM_ENV (production), in the directory where
// make run wrote .data/platform.env, runs `platform migrate`: it takes the
// stack's database from the file, needs none of the serving secrets,
// prints the database first, and migrates that database.
func TestMigrateFromASecondShell(t *testing.T) {
	pool, dbURL := pgtest.NewDB(t)
	dir := t.TempDir()
	t.Chdir(dir)
	for _, k := range []string{"DATABASE_URL", "PLATFORM_ENV", "PLATFORM_ENV_FILE", "DATA_DIR", "KAFKA_BROKERS", "KAFKA_EMBEDDED_PORT", "DATA_ENCRYPTION_KEY", "SIGNING_MASTER_KEY", "LEDGER_SALT"} {
		t.Setenv(k, "")
	}
	writeEnv(t, filepath.Join(dir, ".data", envFileName),
		"DATABASE_URL="+quoteShell(dbURL)+"\nDATA_ENCRYPTION_KEY='02e85d5b478f8fbb565bbe7dd27c6c8acdfe33e152353f867a929acb33361b93'\n"+
			"SIGNING_MASTER_KEY='9c1f4e0b7a2d83c56e19f0a4b7d2c8e5136a9f0d4c7b2e8a5f1d3c6b9e0a7f24'\nLEDGER_SALT='5e8b1c7d2a9f4036e7c1b8d5a2f9e4c3b6d0a7f1e8c5b2d9a6f3c0e7b4d1a8f5'\n"+
			"KAFKA_EMBEDDED_PORT=56304\n", 0o600)

	stdout, stderr, code := captureRun(t, []string{"migrate"})
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	first, _, _ := strings.Cut(stderr, "\n")
	if want := "platform: database " + databaseTarget(dbURL) + ", broker 127.0.0.1:56304 embedded"; !strings.HasPrefix(first, want) ||
		!strings.HasSuffix(first, filepath.Join(dir, ".data", envFileName)+")") {
		t.Fatalf("first line of stderr %q, want it to start %q and name the env file", first, want)
	}
	if !strings.HasPrefix(stdout, "migrations applied: ") {
		t.Fatalf("stdout %q", stdout)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM goose_db_version WHERE version_id > 0`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("the file's database was not migrated: %d rows, %v", n, err)
	}
}

// TestDLQNamesTheUnreachableBroker: dlq list against a port nothing
// listens on names the address and KAFKA_EMBEDDED_PORT.
func TestDLQNamesTheUnreachableBroker(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr, port := l.Addr().String(), l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = reachable(ctx, Config{KafkaPort: port}, []string{addr})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "KAFKA_EMBEDDED_PORT") {
		t.Fatalf("err = %v, want one naming %s and KAFKA_EMBEDDED_PORT", err, addr)
	}
}

// captureRun runs runMain with os.Stdout and os.Stderr captured.
func captureRun(t *testing.T, args []string) (stdout, stderr string, code int) {
	t.Helper()
	capture := func(f **os.File) func() string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := *f
		*f = w
		out := make(chan string)
		go func() { b, _ := io.ReadAll(r); out <- string(b) }()
		return func() string { *f = old; w.Close(); return <-out }
	}
	endOut, endErr := capture(&os.Stdout), capture(&os.Stderr)
	code = runMain(args)
	return endOut(), endErr(), code
}

// TestServerModeNotFromTheEnvFile: a server with PLATFORM_ENV unset does not
// run in development because the env file says so: it refuses to start,
// naming the file; its own environment's PLATFORM_ENV, a file saying
// production, and operator commands are unaffected.
func TestServerModeNotFromTheEnvFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "platform.env")
	writeEnv(t, path, "PLATFORM_ENV=development\nKAFKA_EMBEDDED_PORT=1\n", 0o600)
	load := func(env map[string]string) envSource {
		t.Helper()
		src, err := loadEnvSource(path, true, lookupOf(env))
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	for _, cmd := range []string{"run", "gateway", "consume", "relay", "broker"} {
		err := checkServerMode(commandNamed(cmd), load(nil))
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "PLATFORM_ENV=development") {
			t.Errorf("%s with development only in the file: %v, want a refusal naming the file", cmd, err)
		}
		if err := checkServerMode(commandNamed(cmd), load(map[string]string{"PLATFORM_ENV": "development"})); err != nil {
			t.Errorf("%s with PLATFORM_ENV=development in its environment: %v", cmd, err)
		}
	}
	for _, cmd := range []string{"admin", "migrate", "ledger", "dlq", "topics"} {
		if err := checkServerMode(commandNamed(cmd), load(nil)); err != nil {
			t.Errorf("operator command %s: %v", cmd, err)
		}
	}
	writeEnv(t, path, "PLATFORM_ENV=production\n", 0o600)
	if err := checkServerMode(commandNamed("run"), load(nil)); err != nil {
		t.Errorf("a file saying production: %v", err)
	}
}
