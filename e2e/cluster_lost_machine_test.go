package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestClusterLostMachineBackBeforeTTL: the primary's machine is lost
// (Patroni and postmaster kill -9 together) and comes back at once, before
// its leader key's 20 s TTL runs out — a quick reboot, or the nemesis's
// overlapping fault whose `cluster.sh up` starts every member that is not
// running. Patroni 3.0.2 on the way up re-leased the key, "failed over" by
// deleting it compared with the mod_revision it had read before (nothing
// was deleted), kept it and promoted its own Postgres again, while the
// standby followed it, never promoted (issue 44's open finding:
// "following a leader (pg1)" past the TTL). cluster.sh now releases a
// member's leader key before it starts that member's Patroni when its
// postmaster is gone too: the synchronous standby is promoted, and the
// machine rejoins as its synchronous standby.
func TestClusterLostMachineBackBeforeTTL(t *testing.T) {
	t.Parallel() // a cluster start: see "Parallel tests" in main_test.go
	harness.NeedCluster(t)
	c := harness.StartLocalCluster(t, t.Failed, baseEnvForCluster())
	harness.Eventually(t, 120*time.Second, "a synchronous standby before the machine kill", c.Replicated)
	old := c.Primary()
	pids := map[string]int{}
	for _, m := range c.Members() {
		pids[m] = c.Pid(m)
	}
	start := time.Now()
	if err := c.KillMachine(old); err != nil {
		t.Fatalf("kill machine %d: %v", old, err)
	}
	out, err := c.Script("up")
	if err != nil {
		t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
	back := time.Since(start)
	// up starts what is down and nothing else: every platform process runs
	// on (a pipeline of grep -q under pipefail once took its own members for
	// scaled-in ones, and every up restarted all but the last consumer)
	for m, pid := range pids {
		if now := c.Pid(m); now != pid {
			t.Errorf("cluster.sh up restarted %s (pid %d, now %d), which was running", m, pid, now)
		}
	}
	// On a machine loaded enough that `up` takes longer than the TTL, the
	// standby was promoted by the TTL first and no key was left to release.
	released := strings.Contains(string(out), "released its leader key")
	var promoted time.Duration
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if p := c.Primary(); p >= 0 && p != old {
			promoted = time.Since(start)
			break
		}
	}
	if promoted == 0 {
		t.Fatalf("the machine of pg%d back %.1fs after its kill: the standby was not promoted within 60 s; what etcd holds:\n%s",
			old+1, back.Seconds(), c.DCSReport())
	}
	t.Logf("the machine of pg%d back %.1fs after its kill (its leader key released by cluster.sh: %v), the standby promoted %.1fs after the kill",
		old+1, back.Seconds(), released, promoted.Seconds())
	harness.Eventually(t, 180*time.Second, "the lost machine back as synchronous standby", c.Replicated)
	// the Patroni cluster.sh up started again, as every member's, runs with
	// the fix of its rewind check (TestPatroniRunFixesRewindCheck)
	patroniRunsFixed(t, c, fmt.Sprintf("patroni-%d", old+1))
	patroniRunsFixed(t, c, fmt.Sprintf("patroni-%d", 2-old))
	if p := c.Primary(); p == old {
		t.Errorf("pg%d, the lost machine, is primary again", old+1)
	}
}
