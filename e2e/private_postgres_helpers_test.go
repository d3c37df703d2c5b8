package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
)

// privatePostgres is a PostgreSQL server of one test's own, so that the
// test can crash it (an immediate shutdown: no checkpoint, recovery from the
// WAL at the next start) without touching the server every other test
// shares. It uses the binaries deploy/local/stack.sh installed; run as
// root, the server runs as the postgres user, as the stack's does.
type privatePostgres struct {
	bin, dir string
	// root holds dir and whatever else the test keeps beside the server
	// (a pgBackRest repository: backup_helpers_test.go).
	root   string
	port   int
	asUser string // "" when the test runs as an ordinary user
}

func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	return startPrivatePostgresWith(t, nil)
}

// startPrivatePostgresWith starts a private server whose postgresql.conf
// also gets what conf returns for the server (its root and port are set).
func startPrivatePostgresWith(t *testing.T, conf func(pg *privatePostgres) string) *privatePostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("no PostgreSQL server binaries under /usr/lib/postgresql (make stack installs them)")
	}
	sort.Slice(bins, func(i, j int) bool { return pgMajor(bins[i]) < pgMajor(bins[j]) })
	pg := &privatePostgres{bin: filepath.Dir(bins[len(bins)-1]), port: harness.FreePort(t)}
	// /tmp, not t.TempDir(): the postgres user must traverse to it.
	root, err := os.MkdirTemp("", "pgcrash-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	pg.root = root
	pg.dir = filepath.Join(root, "data")
	if err := os.Mkdir(pg.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		pg.asUser = "postgres"
		u, err := user.Lookup(pg.asUser)
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(pg.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = pg.ctl("stop", "-m", "immediate", "-w")
		_ = os.RemoveAll(root)
	})
	if out, err := pg.run("initdb", "-D", pg.dir, "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--locale=C"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	settings := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = ''\nmax_connections = 200\n"+
		"shared_buffers = 128MB\nfsync = on\nsynchronous_commit = on\njit = off\nlogging_collector = off\n", pg.port)
	f, err := os.OpenFile(filepath.Join(pg.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if conf != nil {
		settings += conf(pg)
	}
	_, err = f.WriteString(settings)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	pg.start(t)
	return pg
}

func pgMajor(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func (pg *privatePostgres) run(tool string, args ...string) ([]byte, error) {
	name := filepath.Join(pg.bin, tool)
	if pg.asUser != "" {
		args = append([]string{"-u", pg.asUser, "--", name}, args...)
		name = "runuser"
	}
	return exec.Command(name, args...).CombinedOutput()
}

func (pg *privatePostgres) ctl(args ...string) error {
	out, err := pg.run("pg_ctl", append([]string{"-D", pg.dir}, args...)...)
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// start starts the server and waits until it accepts connections.
func (pg *privatePostgres) start(t *testing.T) {
	t.Helper()
	if err := pg.ctl("start", "-w", "-t", "60", "-l", filepath.Join(pg.dir, "server.log")); err != nil {
		t.Fatal(err)
	}
}

// crash stops the server the way a power cut would look to it: an
// immediate shutdown, with no checkpoint; the next start replays the WAL.
func (pg *privatePostgres) crash(t *testing.T) {
	t.Helper()
	if err := pg.ctl("stop", "-m", "immediate", "-w"); err != nil {
		t.Fatal(err)
	}
}

// newDatabase creates a database with a name of its own (the ClickHouse
// copy is named after it) and returns its URL.
func (pg *privatePostgres) newDatabase(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("pgcrash_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.port, name)
}
