package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// archivedPostgres is a private Postgres (private_postgres_helpers_test.go)
// that archives its WAL continuously to a pgBackRest repository of its own
// beside its data directory, as deploy/local/stack.sh sets up the local
// stack's.
type archivedPostgres struct {
	*privatePostgres
	conf string // the pgBackRest configuration file
}

const drillStanza = "drill"

// archiveTimeout is the drills' archive_timeout: a segment with any change
// is archived after at most this long, so it bounds what a restore to the
// latest point can lose from the database.
const archiveTimeout = time.Second

func startArchivedPostgres(t *testing.T) *archivedPostgres {
	t.Helper()
	if _, err := exec.LookPath("pgbackrest"); err != nil {
		t.Fatal("pgbackrest is not installed (deploy/local/stack.sh up installs it)")
	}
	a := &archivedPostgres{}
	pg := startPrivatePostgresWith(t, func(pg *privatePostgres) string {
		a.conf = filepath.Join(pg.Root(), "pgbackrest.conf")
		repo := filepath.Join(pg.Root(), "backup")
		for _, d := range []string{"repo", "log", "lock", "spool", "sock"} {
			if err := os.MkdirAll(filepath.Join(repo, d), 0o750); err != nil {
				t.Fatal(err)
			}
		}
		body := fmt.Sprintf("[global]\nrepo1-path=%s/repo\nlog-path=%s/log\nlock-path=%s/lock\nspool-path=%s/spool\n"+
			"log-level-console=warn\ncompress-type=lz4\nstart-fast=y\nprocess-max=2\n\n[%s]\npg1-path=%s\npg1-port=%d\npg1-socket-path=%s\npg1-user=postgres\n",
			repo, repo, repo, repo, drillStanza, pg.Dir(), pg.Port, filepath.Join(repo, "sock"))
		if err := os.WriteFile(a.conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if pg.AsUser() != "" {
			chownTree(t, repo, pg.AsUser())
		}
		return fmt.Sprintf("unix_socket_directories = '%s'\nwal_level = replica\narchive_mode = on\n"+
			"archive_command = 'pgbackrest --config=%s --stanza=%s archive-push %%p'\narchive_timeout = %d\n",
			filepath.Join(pg.Root(), "backup", "sock"), a.conf, drillStanza, int(archiveTimeout/time.Second))
	})
	a.privatePostgres = pg
	a.backrest(t, "stanza-create")
	return a
}

func chownTree(t *testing.T, dir, owner string) {
	t.Helper()
	u, err := user.Lookup(owner)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	err = filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(path, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// backrest runs pgbackrest on the server's stanza (as the postgres user
// when the test runs as root).
func (a *archivedPostgres) backrest(t *testing.T, args ...string) string {
	t.Helper()
	args = append([]string{"--config=" + a.conf, "--stanza=" + drillStanza}, args...)
	name := "pgbackrest"
	if a.AsUser() != "" {
		args = append([]string{"-u", a.AsUser(), "--", name}, args...)
		name = "runuser"
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbackrest %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kill9 kills the postmaster with SIGKILL, as the OOM killer or a crash
// would, and waits until it is gone.
func (a *archivedPostgres) kill9(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(a.Dir(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("postmaster %d still alive after SIGKILL", pid)
		}
	}
}

// loseDataDir deletes the data directory and makes an empty one, as a
// replaced disk would leave it.
func (a *archivedPostgres) loseDataDir(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(a.Dir()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(a.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if a.AsUser() != "" {
		chownTree(t, a.Dir(), a.AsUser())
	}
}

// restore restores the repository's latest backup into the (empty) data
// directory with extra pgBackRest options (a target), starts the server
// and returns how long the files took (copy) and the whole until it was
// out of recovery and writable (the RTO).
func (a *archivedPostgres) restore(t *testing.T, opts ...string) (copied, total time.Duration) {
	t.Helper()
	start := time.Now()
	a.backrest(t, append(opts, "restore")...)
	copied = time.Since(start)
	a.start(t)
	// A server in recovery accepts (read-only) connections before it has
	// replayed the archive: done is when it is out of recovery.
	ctx := context.Background()
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var inRecovery bool
		conn, err := pgx.Connect(ctx, a.URL("postgres"))
		if err == nil {
			err = conn.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&inRecovery)
			conn.Close(ctx)
		}
		if err == nil && !inRecovery {
			return copied, time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still in recovery 5 min after the restore (%v)", err)
		}
	}
}

// archiveNow switches to a new WAL segment and waits until the archive
// holds it: everything committed before is in the repository.
func (a *archivedPostgres) archiveNow(t *testing.T, dbURL string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var seg string
	if err := conn.QueryRow(ctx, `SELECT pg_walfile_name(pg_switch_wal())`).Scan(&seg); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var last string
		if err := conn.QueryRow(ctx, `SELECT coalesce(last_archived_wal, '') FROM pg_stat_archiver`).Scan(&last); err != nil {
			t.Fatal(err)
		}
		if last >= seg {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("segment %s not archived after 60 s (last %s)", seg, last)
		}
	}
}
