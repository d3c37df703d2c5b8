package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/e2e/history"
)

// nemesisFault is one injected fault: its kind, the member, when it began
// and when the member was back.
type nemesisFault struct {
	kind, member string
	start, end   time.Time
	rto          time.Duration
	note         string // what the fault saw (a promotion, the fence)
	overlap      bool   // injected with another one
	// back is when a killed member's process was started again (its pid
	// file, after cluster.sh up); zero for faults that kill nothing. The
	// alert check takes the condition's length from it (a kill's process
	// is down until then, not for the whole fault).
	back time.Time
	// promoted is when a machine kill's standby was promoted, or when a
	// member was primary again after both machines were lost: the end of
	// the fault's PatroniNoLeader condition, well before the fault's end
	// (the other member back as synchronous standby) and, for a machine
	// kill, possibly before the leader key's TTL (an overlapping fault's
	// cluster.sh up releases the lost member's key); zero otherwise.
	promoted time.Time
	// the 503s and cut answers it caused (nemesisRTOs), the first and last
	unavailable       int
	firstBad, lastBad time.Time
}

// startedAfter is when member's process was started again after at (its
// pid file), zero when it was not.
func (n *nemesis) startedAfter(member string, at time.Time) time.Time {
	if s := n.c.Started(member); s.After(at) {
		return s
	}
	return time.Time{}
}

type nemesis struct {
	c      *harness.LocalCluster
	rng    *rand.Rand // under mu (overlapping faults draw from it)
	rec    *history.Recorder
	faults []*nemesisFault
	// addrs is the cluster's address layout (cluster.sh addrs)
	addrs map[string]harness.Addr
	// fenceAcked counts the probe writes each isolated primary acknowledged
	fenceAcked map[int]int
	// everyKind: every kind once (shuffled) before the deadline counts
	everyKind bool
	mu, upMu  sync.Mutex
}

var nemesisKinds = []string{"gateway-kill", "consumer-kill", "consumer-stop", "primary-kill", "relay-lock",
	"broker-kill", "machine-kill", "postgres-both-down", "etcd-cut-primary", "replication-cut",
	"gateway-broker-cut", "consumer-pg-cut", "relay-broker-cut", "pg-loss", "clock-skew", "overlap"}

// run injects faults, one at a time (an "overlap" is two at once): the
// kinds in a seeded order, then random kinds, until until — every kind once
// first when everyKind (NEMESIS_EVERY_KIND), whatever until says; each is
// recovered (the member restored, Postgres replicated again) before the next.
func (n *nemesis) run(t *testing.T, until time.Time) {
	t.Helper()
	kinds := nemesisKinds
	order := append([]string(nil), kinds...)
	n.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for i := 0; (n.everyKind && i < len(order)) || time.Now().Before(until); i++ {
		kind := kinds[n.intn(len(kinds))]
		if i < len(order) {
			kind = order[i]
		}
		time.Sleep(time.Duration(1000+n.intn(2000)) * time.Millisecond)
		var fs []*nemesisFault
		if kind == "overlap" {
			fs = n.overlap(t)
		} else if f := n.inject(t, kind); f != nil {
			fs = append(fs, f)
		}
		for _, f := range fs {
			n.faults = append(n.faults, f)
			n.rec.Fault(history.Fault{Kind: f.kind, Member: f.member, Start: f.start, End: f.end})
			t.Logf("fault %s %s: %.1fs %s", f.kind, f.member, f.end.Sub(f.start).Seconds(), f.note)
		}
	}
}

func (n *nemesis) consumer() string {
	var cs []string
	for _, m := range n.c.Members() {
		if !strings.HasPrefix(m, "gateway-") && !strings.HasPrefix(m, "relay-") {
			cs = append(cs, m)
		}
	}
	sort.Strings(cs)
	return cs[n.rng.IntN(len(cs))]
}

func (n *nemesis) inject(t *testing.T, kind string) *nemesisFault {
	t.Helper()
	f := &nemesisFault{kind: kind}
	if n.injectLink(t, f) {
		return f
	}
	switch kind {
	case "gateway-kill":
		f.member = fmt.Sprintf("gateway-%d", 1+n.intn(2))
		f.start = time.Now()
		if err := n.c.Signal(f.member, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", f.member, err)
		}
		time.Sleep(time.Duration(500+n.intn(2500)) * time.Millisecond)
		n.up(t)
		f.back = n.startedAfter(f.member, f.start)
	case "consumer-kill":
		n.mu.Lock()
		f.member = n.consumer()
		n.mu.Unlock()
		f.start = time.Now()
		if err := n.c.Signal(f.member, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", f.member, err)
		}
		time.Sleep(time.Duration(500+n.intn(2500)) * time.Millisecond)
		n.up(t)
		f.back = n.startedAfter(f.member, f.start)
	case "consumer-stop":
		// A zombie: it wakes after the group moved its partitions.
		n.mu.Lock()
		f.member = n.consumer()
		n.mu.Unlock()
		f.start = time.Now()
		if err := n.c.Signal(f.member, syscall.SIGSTOP); err != nil {
			t.Fatalf("stop %s: %v", f.member, err)
		}
		time.Sleep(nemesisSessionTimeout + time.Duration(2000+n.intn(3000))*time.Millisecond)
		if err := n.c.Signal(f.member, syscall.SIGCONT); err != nil {
			t.Fatalf("continue %s: %v", f.member, err)
		}
		n.up(t)
	case "primary-kill":
		// Only with a synchronous standby to promote.
		harness.Eventually(t, 90*time.Second, "a synchronous standby before the primary kill", n.c.Replicated)
		i := n.c.Primary()
		pid := n.c.PostmasterPid(i)
		if pid <= 0 {
			t.Fatalf("no postmaster pid for member %d", i)
		}
		f.member = fmt.Sprintf("postgres pg%d", i+1)
		f.start = time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill postmaster %d: %v", pid, err)
		}
		harness.Eventually(t, 60*time.Second, "the standby promoted", func() bool { p := n.c.Primary(); return p >= 0 && p != i })
		harness.Eventually(t, 120*time.Second, "the old primary back as synchronous standby", n.c.Replicated)
		n.up(t)
	case "relay-lock":
		f.member = "relay lock"
		f.start = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		found, err := n.c.TerminateRelayLock(ctx)
		cancel()
		if err != nil {
			t.Logf("terminate the relay's lock connection: %v", err)
			return nil
		}
		if !found {
			t.Logf("no relay held the outbox lock")
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	f.end = time.Now()
	return f
}
