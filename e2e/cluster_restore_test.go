package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
)

// TestClusterBackupRestore drills the local cluster's backups (deploy/docs/backups.md,
// local cluster): both Patroni members archive with
// pgBackRest into one repository and `up` takes a first full backup; an
// incremental one is taken from the primary; a table is filled, then
// dropped (the bad event), then another is created; T is read where an
// operator reads it, the primary's Postgres log line of the DROP
// (log_statement=ddl); `cluster.sh restore T` (Patroni's procedure: stop,
// patronictl remove, pgBackRest restore of pg1, pg2 re-cloned) brings the
// table back with its rows and without what came after, says where
// recovery stopped, and the cluster runs again: a primary with its
// synchronous standby, the API through HAProxy, archiving, and `platform
// verify` with `cluster.sh env` (LEDGER_SALT: hashes recomputed) is ok.
func TestClusterBackupRestore(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	harness.NeedCluster(t)
	c := harness.StartLocalCluster(t, t.Failed, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	script := func(args ...string) string {
		t.Helper()
		start := time.Now()
		out, err := c.Script(args...)
		if err != nil {
			t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("cluster.sh %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
		return string(out)
	}

	status := script("status")
	for _, want := range []string{"stanza: platform", "status: ok", "full backup:", "archive: last archived"} {
		if !strings.Contains(status, want) {
			t.Fatalf("cluster.sh status lacks %q:\n%s", want, status)
		}
	}
	if out := script("backup", "incr"); !strings.Contains(out, "incr backup:") {
		t.Fatalf("cluster.sh backup incr lists no incremental backup:\n%s", out)
	}

	exec1 := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec1(`CREATE TABLE restore_drill (id int PRIMARY KEY, what text)`)
	exec1(`INSERT INTO restore_drill VALUES (1, 'before'), (2, 'before')`)
	time.Sleep(time.Second)
	exec1(`INSERT INTO restore_drill VALUES (3, 'just before')`)
	time.Sleep(time.Second)
	exec1(`DROP TABLE restore_drill`)
	time.Sleep(time.Second)
	exec1(`CREATE TABLE after_the_drop (x int)`)

	// T: the DROP's line in the primary's log, as the runbook says
	logs, _ := filepath.Glob(filepath.Join(c.Dir, "log", "patroni-*.log"))
	re := regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] \S+ LOG:  statement: DROP TABLE restore_drill$`)
	var target string
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		if m := re.FindSubmatch(b); m != nil {
			target = string(m[1]) + "+00"
		}
	}
	if target == "" {
		t.Fatalf("no Postgres log line of the DROP in %v", logs)
	}
	t.Logf("T = %s (the DROP's log line)", target)

	out := script("restore", target)
	stopped := regexp.MustCompile(`recovery stopping before commit of transaction \d+, time .*|last completed transaction was at log time .*`).FindAllString(out, -1)
	if len(stopped) != 2 {
		t.Fatalf("cluster.sh restore does not say where recovery stopped:\n%s", out)
	}
	t.Logf("where recovery stopped: %s", strings.Join(stopped, "; "))

	conn, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows int
	var after *string
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM restore_drill), to_regclass('after_the_drop')::text`).Scan(&rows, &after); err != nil {
		t.Fatalf("the restored database: %v", err)
	}
	if rows != 3 || after != nil {
		t.Fatalf("restored to T: %d rows of restore_drill (want 3), after_the_drop %v (want none)", rows, after)
	}

	deadline := time.Now().Add(2 * time.Minute)
	for !c.Replicated() {
		if time.Now().After(deadline) {
			t.Fatalf("no synchronous standby 2 min after the restore:\n%s", c.Status())
		}
		time.Sleep(time.Second)
	}
	resp, err := http.Get(c.URL() + "/api/platform/version")
	if err != nil {
		t.Fatalf("the API after the restore: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the API after the restore: %d", resp.StatusCode)
	}
	if out := script("backup", "full"); !strings.Contains(out, "archive: last archived") {
		t.Fatalf("no backup after the restore:\n%s", out)
	}

	verify := exec.CommandContext(ctx, harness.Binary(t), "verify")
	verify.Env = append(os.Environ(), c.Env()...)
	vout, err := verify.CombinedOutput()
	if err != nil {
		t.Fatalf("platform verify after the restore: %v\n%s", err, vout)
	}
	if !strings.Contains(string(vout), "hashes recomputed") {
		t.Fatalf("platform verify did not recompute the ledger's hashes (LEDGER_SALT from cluster.sh env):\n%s", vout)
	}
}
