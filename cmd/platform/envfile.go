package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// envFileName is the file `make run` (and `make cluster`) write into
// DATA_DIR: the environment the stack started with, so an operator command
// from a second shell talks to that stack and not to the defaults.
const envFileName = "platform.env"

// envSource is where a command's settings come from: the real environment
// first, then the env file, for what the environment leaves unset.
type envSource struct {
	lookup func(string) (string, bool)
	path   string // the env file read; "" when none
	// explicit: the file was named (--env-file, PLATFORM_ENV_FILE)
	explicit bool
	file     map[string]string
}

// getenv is the LoadConfig reader: a non-empty variable of the real
// environment wins over the file.
func (s envSource) getenv(k string) string {
	if v, ok := s.lookup(k); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return s.file[k]
}

// envFileFlag removes --env-file PATH (or --env-file=PATH, one dash too)
// from args, wherever it stands before a "--": no subcommand has a flag of
// that name, and an operator appends it as readily as they prefix it.
func envFileFlag(args []string) (rest []string, path string, set bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), path, set, nil
		}
		name, val, hasVal := strings.Cut(a, "=")
		if name != "--env-file" && name != "-env-file" {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 == len(args) {
				return nil, "", false, usageError{"--env-file: needs a path (or none)"}
			}
			i++
			val = args[i]
		}
		path, set = val, true
	}
	return rest, path, set, nil
}

// loadEnvSource finds and reads the env file. The lookup, first hit wins:
//
//  1. --env-file PATH, then PLATFORM_ENV_FILE (an explicit choice: a missing
//     file is an error; "none" reads no file);
//  2. $DATA_DIR/platform.env when DATA_DIR is set (the stack of that data dir);
//  3. ./.data/platform.env (the Makefile's DATA_DIR for a shell at the
//     repository root, where the README's commands are typed).
//
// The implicit ones are read only when present. A file that others can
// read is refused: it may hold the stack's secrets.
func loadEnvSource(flagPath string, flagSet bool, lookup func(string) (string, bool)) (envSource, error) {
	src := envSource{lookup: lookup}
	path, explicit := flagPath, flagSet
	if !explicit {
		if v, ok := lookup("PLATFORM_ENV_FILE"); ok && v != "" {
			path, explicit = v, true
		}
	}
	if explicit && path == "none" {
		return src, nil
	}
	if !explicit {
		path = filepath.Join(".data", envFileName)
		if d, ok := lookup("DATA_DIR"); ok && strings.TrimSpace(d) != "" {
			path = filepath.Join(strings.TrimSpace(d), envFileName)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return src, nil
		}
		return src, fmt.Errorf("env file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		return src, fmt.Errorf("env file %s: mode %04o lets others read it (it may hold secrets): chmod 600 %s", path, st.Mode().Perm(), path)
	}
	vars, err := parseEnvFile(f)
	if err != nil {
		return src, fmt.Errorf("env file %s: %w", path, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	src.path, src.file, src.explicit = path, vars, explicit
	return src, nil
}

// parseEnvFile reads NAME=VALUE lines; blank lines and # comments are
// skipped, and a value may be single-quoted as a POSIX shell quotes it
// (see quoteShell), so the file can also be sourced by a shell.
func parseEnvFile(r io.Reader) (map[string]string, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || !validEnvName(name) {
			return nil, fmt.Errorf("line %d: not NAME=VALUE", n)
		}
		if strings.HasPrefix(val, "'") {
			v, err := unquoteShell(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", n, name, err)
			}
			val = v
		}
		vars[name] = val
	}
	return vars, sc.Err()
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// quoteShell quotes s for a POSIX shell: each quote inside closes the quoted run, adds an escaped quote and opens a new run.
func quoteShell(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unquoteShell undoes quoteShell: single-quoted runs joined by \' escapes.
func unquoteShell(s string) (string, error) {
	var b strings.Builder
	for s != "" {
		switch {
		case strings.HasPrefix(s, "'"):
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", errors.New("unterminated quote")
			}
			b.WriteString(s[1 : 1+end])
			s = s[end+2:]
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		default:
			return "", errors.New("text outside quotes")
		}
	}
	return b.String(), nil
}

// cmdEnvFile writes the configuration variables set in the environment to
// path with mode 0600: `platform envfile write DATA_DIR/platform.env`, what
// `make run` calls before starting the stack. The names are those
// LoadConfig reads, so the file never lags behind the configuration.
func cmdEnvFile(args []string, getenv func(string) string) error {
	if len(args) != 2 || args[0] != "write" {
		return usageError{"envfile: usage: platform envfile write <path>"}
	}
	read := map[string]bool{}
	_, _ = LoadConfig(func(k string) string { read[k] = true; return getenv(k) })
	var b strings.Builder
	fmt.Fprintf(&b, "# The environment a local stack started with (%s); platform subcommands\n", time.Now().UTC().Format(time.RFC3339))
	b.WriteString("# read it when the shell leaves a variable unset (see --env-file).\n")
	names := make([]string, 0, len(read))
	for k := range read {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			fmt.Fprintf(&b, "%s=%s\n", k, quoteShell(v))
		}
	}
	return writeFile0600(args[1], b.String())
}

// writeFile0600 replaces path atomically with a file only its owner reads.
func writeFile0600(path, content string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("envfile: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("envfile: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("envfile: %w", err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return fmt.Errorf("envfile: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("envfile: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("envfile: %w", err)
	}
	return nil
}

// targetLine is the one line a command prints (to stderr) before it
// changes anything: the database and the broker it talks to and where its
// settings came from, so a command typed in the wrong shell shows it.
func targetLine(cfg Config, src envSource) string {
	settings := "settings: environment only"
	if src.path != "" {
		settings = "settings: environment, then " + src.path
	}
	return fmt.Sprintf("platform: database %s, broker %s (%s, %s)", databaseTarget(cfg.DatabaseURL), brokerTarget(cfg), cfg.Environment, settings)
}

// databaseTarget is host:port/db of a DSN, never its password.
func databaseTarget(dsn string) string {
	if dsn == "" {
		return "unset (DATABASE_URL)"
	}
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "unparsable (DATABASE_URL)"
	}
	return fmt.Sprintf("%s:%d/%s", pc.Host, pc.Port, pc.Database)
}

// brokerTarget names the Kafka brokers, or the embedded broker's address.
func brokerTarget(cfg Config) string {
	if len(cfg.KafkaBrokers) > 0 {
		return strings.Join(cfg.KafkaBrokers, ",")
	}
	return fmt.Sprintf("127.0.0.1:%d embedded (KAFKA_EMBEDDED_PORT)", cfg.KafkaPort)
}

// checkServerMode refuses a server command whose environment leaves
// PLATFORM_ENV unset while the env file names a mode other than production:
// development (test processor, no admin two-factor, mail to a directory) is
// never switched on by a file a server happens to find beside its data, only
// by its own environment (issue 45). Operator commands may take the mode of
// the stack they talk to from the file.
//
// The server commands (subcommand.server) start long-running processes
// that serve or apply: their mode must come from their own environment.
func checkServerMode(cmd *subcommand, src envSource) error {
	if cmd == nil || !cmd.server {
		return nil
	}
	if v, ok := src.lookup("PLATFORM_ENV"); ok && strings.TrimSpace(v) != "" {
		return nil
	}
	if v := strings.TrimSpace(src.file["PLATFORM_ENV"]); v != "" && v != envProduction {
		return fmt.Errorf("PLATFORM_ENV=%s comes from the env file %s, not from the environment: a server runs in %s only when its own environment says so "+
			"(set PLATFORM_ENV=%s to mean it, or leave it to run in production)", v, src.path, v, v)
	}
	return nil
}
