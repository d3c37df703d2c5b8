package e2e

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

// TestPatroniRunFixesRewindCheck: the cluster's Patroni (Debian's 3.0.2)
// runs through deploy/patroni/patroni_run.py, which applies upstream's fix
// of its rewind check (patroni/patroni#2863): a crashed primary restarted as
// a replica whose WAL receiver already streams the new primary's timeline
// while its replay stands past the fork on the old one must be rewound. The
// nemesis found the member stuck without it (a machine kill, then the
// promoted primary's postmaster killed: "waiting for WAL to become
// available" for good, no synchronous standby). The script's --check asks
// the patched check for such a member's timeline; without the fix the
// answer is the receiver's.
func TestPatroniRunFixesRewindCheck(t *testing.T) {
	harness.NeedCluster(t)
	out, err := exec.Command("/usr/bin/python3", "../deploy/patroni/patroni_run.py", "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("patroni_run.py --check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "its replay on 2: 2") {
		t.Fatalf("patroni_run.py --check did not answer the replayed timeline:\n%s", out)
	}
	t.Logf("patroni_run.py --check:\n%s", out)
}

// patroniRunsFixed fails t unless member's process (patroni-1 or -2) is
// Patroni started through deploy/patroni/patroni_run.py.
func patroniRunsFixed(t *testing.T, c *harness.LocalCluster, member string) {
	t.Helper()
	pid := c.Pid(member)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatalf("%s (pid %d): %v", member, pid, err)
	}
	if cmd := strings.ReplaceAll(string(b), "\x00", " "); !strings.Contains(cmd, "deploy/patroni/patroni_run.py ") {
		t.Errorf("%s runs %q, not deploy/patroni/patroni_run.py", member, cmd)
	}
}
