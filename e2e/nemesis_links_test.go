package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/e2e/harness"
)

// The nemesis's second round (issue 44): faults on links, not only
// processes. cluster.sh gives every member its own loopback address
// (`cluster.sh addrs`): etcd one per Patroni member, each Postgres a
// replication address, each platform process the address it connects
// from; `cluster.sh fault` cuts a link with iptables on lo or drops (and,
// where the kernel has netem, delays) packets on the Postgres ports. Every
// rule is removed when the test ends, failed or not (LocalCluster.Fault).

// nemesisLightKinds are the faults that may overlap a heavier one: one
// process or one link, none of Postgres's membership.
var nemesisLightKinds = []string{"gateway-kill", "consumer-kill", "gateway-broker-cut", "consumer-pg-cut", "relay-broker-cut", "relay-lock"}

// nemesisOverlapFirst are the faults an overlap starts with.
var nemesisOverlapFirst = []string{"primary-kill", "machine-kill", "replication-cut", "pg-loss", "broker-kill", "gateway-broker-cut"}

// nemesisFence probes the Postgres member a fault cuts off from etcd: a
// write straight to it (not through the multi-host DSN) every 100 ms, so
// the test sees when the old primary stopped acknowledging writes.
type nemesisFence struct {
	member int
	mu     sync.Mutex
	acked  int
	lastOK time.Time
	// firstRefused is the first write refused or timed out after the cut.
	firstRefused time.Time
	stop         chan struct{}
	done         chan struct{}
}

// memberConfig connects to Postgres member i (0 or 1) itself, from
// 127.0.0.1, as the superuser: not through the multi-host DSN.
func (n *nemesis) memberConfig(t *testing.T, i int) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgx.ParseConfig(n.c.DatabaseURL)
	if err != nil {
		t.Fatalf("member %d: %v", i, err)
	}
	cfg.Host, cfg.Port = "127.0.0.1", uint16(n.addrs[fmt.Sprintf("pg-%d", i+1)].Port)
	cfg.Fallbacks, cfg.ValidateConnect = nil, nil
	cfg.ConnectTimeout = time.Second
	return cfg
}

// memberSkew is member i's clock less ours, as now() shows it.
func (n *nemesis) memberSkew(t *testing.T, i int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, n.memberConfig(t, i))
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var at time.Time
	before := time.Now()
	if err := conn.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&at); err != nil {
		return 0, err
	}
	return at.Sub(before.Add(time.Since(before) / 2)), nil
}

// startFence begins probing member i (0 or 1) directly, from 127.0.0.1.
func (n *nemesis) startFence(t *testing.T, i int) *nemesisFence {
	t.Helper()
	cfg := n.memberConfig(t, i)
	var err error
	f := &nemesisFence{member: i, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		for {
			select {
			case <-f.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			if conn == nil || conn.IsClosed() {
				conn, err = pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					conn = nil
				}
			}
			ok := false
			if conn != nil {
				_, err := conn.Exec(ctx, `INSERT INTO nemesis_fence (member) VALUES ($1)`, i)
				ok = err == nil
				if err != nil {
					conn.Close(context.Background())
					conn = nil
				}
			}
			cancel()
			now := time.Now()
			f.mu.Lock()
			if ok {
				f.acked++
				f.lastOK = now
			} else if f.firstRefused.IsZero() {
				f.firstRefused = now
			}
			f.mu.Unlock()
		}
	}()
	return f
}

func (f *nemesisFence) end() (acked int, lastOK, firstRefused time.Time) {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acked, f.lastOK, f.firstRefused
}

// fenceSetup creates the probe's table (superuser, platform database).
func nemesisFenceSetup(t *testing.T, c *harness.LocalCluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		t.Fatalf("fence table: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS nemesis_fence (member int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		t.Fatalf("fence table: %v", err)
	}
}

// nemesisFenceCheck: every write the isolated primaries acknowledged is on
// the primary after the run (RPO 0 across a demotion).
func nemesisFenceCheck(t *testing.T, c *harness.LocalCluster, acked map[int]int) {
	t.Helper()
	if len(acked) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		t.Fatalf("fence check: %v", err)
	}
	defer conn.Close(ctx)
	for member, n := range acked {
		var have int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM nemesis_fence WHERE member = $1`, member).Scan(&have); err != nil {
			t.Fatalf("fence check: %v", err)
		}
		if have < n {
			t.Errorf("isolated primaries: pg%d acknowledged %d probe writes, %d are on the primary after the run", member+1, n, have)
		}
	}
}

// hold sleeps between lo and lo+spread.
func (n *nemesis) hold(lo, spread time.Duration) {
	n.mu.Lock()
	d := lo + time.Duration(n.rng.Int64N(int64(spread)+1))
	n.mu.Unlock()
	time.Sleep(d)
}

// watchPrimary polls for a Patroni primary from now on (every member's
// Patroni is down when it is called) and returns a function that stops the
// poll and tells when one was first seen, zero when none was.
func (n *nemesis) watchPrimary() func() time.Time {
	stop, done := make(chan struct{}), make(chan time.Time, 1)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- time.Time{}
				return
			case <-tick.C:
				if n.c.Primary() >= 0 {
					done <- time.Now()
					return
				}
			}
		}
	}()
	return func() time.Time {
		close(stop)
		return <-done
	}
}

func (n *nemesis) intn(k int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rng.IntN(k)
}

// up runs cluster.sh up, one at a time (overlapping faults both restore).
// A failed up fails the test without ending the fault's goroutine: the
// fault is still recorded, so the history is read against it, and up is
// tried again, so the run goes on with a cluster that recovered.
func (n *nemesis) up(t *testing.T) {
	n.upMu.Lock()
	defer n.upMu.Unlock()
	for try := 1; ; try++ {
		out, err := n.c.Script("up")
		if err == nil {
			return
		}
		t.Errorf("cluster.sh up (try %d of 3): %v\n%s", try, err, out)
		if try == 3 {
			return
		}
		time.Sleep(5 * time.Second)
	}
}

func (n *nemesis) fault(t *testing.T, args ...string) string {
	t.Helper()
	out, err := n.c.Fault(args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// injectLink injures a link or a machine; false when kind is not one of
// these (inject handles it).
func (n *nemesis) injectLink(t *testing.T, f *nemesisFault) bool {
	t.Helper()
	any8 := "127.0.0.0/8"
	broker := n.addrs["broker"]
	switch f.kind {
	case "broker-kill":
		f.member = "broker"
		f.start = time.Now()
		if err := n.c.Signal("broker", syscall.SIGKILL); err != nil {
			t.Fatalf("kill the broker: %v", err)
		}
		n.hold(time.Second, 3*time.Second)
		n.up(t)
		f.back = n.startedAfter("broker", f.start)
	case "machine-kill":
		// The host of the primary lost: Patroni and the postmaster together;
		// the standby waits for the leader key's TTL (20 s, Patroni's floor),
		// unless the machine is back first (an overlapping fault's
		// cluster.sh up): then cluster.sh releases the key before the
		// member's Patroni starts, and the standby is promoted at once.
		harness.Eventually(t, 120*time.Second, "a synchronous standby before the machine kill", n.c.Replicated)
		i := n.c.Primary()
		f.member = fmt.Sprintf("pg%d machine", i+1)
		f.start = time.Now()
		if err := n.c.KillMachine(i); err != nil {
			t.Fatalf("kill machine %d: %v", i, err)
		}
		promoted, reported := false, false
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !promoted; time.Sleep(100 * time.Millisecond) {
			p := n.c.Primary()
			promoted = p >= 0 && p != i
			if !promoted && !reported && time.Since(f.start) > 30*time.Second {
				reported = true
				t.Logf("machine kill of pg%d: no promotion after 30 s; what etcd holds:\n%s", i+1, n.c.DCSReport())
			}
		}
		if promoted {
			f.promoted = time.Now()
			f.note = fmt.Sprintf("promoted after %.1fs", f.promoted.Sub(f.start).Seconds())
		} else {
			// the lost machine's return ends the outage; the run goes on
			f.note = "the standby was not promoted within 60 s"
			t.Errorf("machine kill of pg%d at %s: the standby was not promoted within 60 s", i+1, f.start.Format(time.StampMilli))
		}
		n.up(t)
		harness.Eventually(t, 180*time.Second, "the lost machine back as synchronous standby", n.c.Replicated)
	case "postgres-both-down":
		harness.Eventually(t, 120*time.Second, "a synchronous standby before both machines go", n.c.Replicated)
		f.member = "pg1+pg2 machines"
		f.start = time.Now()
		for i := 0; i < 2; i++ {
			if err := n.c.KillMachine(i); err != nil {
				t.Fatalf("kill machine %d: %v", i, err)
			}
		}
		leader := n.watchPrimary()
		// Long enough that PatroniNoLeader's condition (down, then
		// cluster.sh up and a leader race: 7-10 s more) outlasts its for:,
		// a scrape, an evaluation and Alertmanager's group_wait (17 s at
		// worst); held 2-6 s it lasted 13-17 s, and an alert resolved
		// within the group_wait is rightly never sent.
		n.hold(15*time.Second, 5*time.Second)
		n.up(t)
		harness.Eventually(t, 180*time.Second, "Postgres replicated again after both machines", n.c.Replicated)
		f.promoted = leader()
		if !f.promoted.IsZero() {
			f.note = fmt.Sprintf("a primary again after %.1fs", f.promoted.Sub(f.start).Seconds())
		}
	case "etcd-cut-primary":
		// The primary cut from etcd must demote itself before the standby
		// takes the leader key: no second primary acknowledges a write.
		harness.Eventually(t, 120*time.Second, "a synchronous standby before the etcd cut", n.c.Replicated)
		i := n.c.Primary()
		etcd := n.addrs[fmt.Sprintf("etcd@patroni-%d", i+1)]
		fence := n.startFence(t, i)
		time.Sleep(500 * time.Millisecond)
		f.member = fmt.Sprintf("pg%d from etcd", i+1)
		f.start = time.Now()
		n.fault(t, "cut", any8, etcd.IP, strconv.Itoa(etcd.Port))
		var promoted time.Time
		reported := false
		deadline := time.Now().Add(time.Duration(30+n.intn(10)) * time.Second)
		for time.Now().Before(deadline) {
			if p := n.c.Primary(); p >= 0 && p != i && promoted.IsZero() {
				promoted = time.Now()
			}
			if promoted.IsZero() && !reported && time.Since(f.start) > 28*time.Second {
				reported = true
				t.Logf("etcd cut of pg%d: no promotion after 28 s; what etcd holds:\n%s", i+1, n.c.DCSReport())
			}
			time.Sleep(200 * time.Millisecond)
		}
		acked, lastOK, refused := fence.end()
		n.mu.Lock()
		n.fenceAcked[i] += acked
		n.mu.Unlock()
		n.fault(t, "heal", any8, etcd.IP, strconv.Itoa(etcd.Port))
		f.note = fmt.Sprintf("old primary: last write acknowledged %+.1fs, first refused %+.1fs after the cut", lastOK.Sub(f.start).Seconds(), refused.Sub(f.start).Seconds())
		if promoted.IsZero() {
			f.note += "; the standby was not promoted during the cut"
		} else {
			f.note += fmt.Sprintf("; standby promoted %+.1fs", promoted.Sub(f.start).Seconds())
			if !lastOK.Before(promoted) {
				t.Errorf("etcd cut: the old primary pg%d acknowledged a write at %s, after the standby was promoted at %s: two primaries",
					i+1, lastOK.Format(time.StampMilli), promoted.Format(time.StampMilli))
			}
		}
		if refused.IsZero() {
			t.Errorf("etcd cut: the old primary pg%d never refused a write (%s)", i+1, f.note)
		}
		harness.Eventually(t, 180*time.Second, "Postgres replicated again after the etcd cut", n.c.Replicated)
		n.up(t)
	case "replication-cut":
		// The primary and its synchronous standby cannot reach each other:
		// commits wait until the walsender gives up (wal_sender_timeout 10 s)
		// and Patroni drops the standby from synchronous_standby_names.
		harness.Eventually(t, 120*time.Second, "a synchronous standby before the replication cut", n.c.Replicated)
		i := n.c.Primary()
		pg := n.addrs[fmt.Sprintf("pg-%d", i+1)]
		f.member = fmt.Sprintf("pg%d from its standby", i+1)
		f.start = time.Now()
		n.fault(t, "cut", any8, pg.IP, strconv.Itoa(pg.Port))
		n.hold(15*time.Second, 5*time.Second)
		n.fault(t, "heal", any8, pg.IP, strconv.Itoa(pg.Port))
		harness.Eventually(t, 180*time.Second, "the standby synchronous again", n.c.Replicated)
	case "gateway-broker-cut":
		g := fmt.Sprintf("gateway-%d", 1+n.intn(2))
		a := n.addrs[g]
		f.member = g + " from the broker"
		f.start = time.Now()
		n.fault(t, "cut", a.IP, any8, strconv.Itoa(broker.Port))
		n.hold(5*time.Second, 10*time.Second)
		n.fault(t, "heal", a.IP, any8, strconv.Itoa(broker.Port))
	case "consumer-pg-cut":
		n.mu.Lock()
		name := n.consumer()
		n.mu.Unlock()
		a := n.addrs[name]
		f.member = name + " from Postgres"
		f.start = time.Now()
		for _, pg := range []string{"pg-1", "pg-2"} {
			n.fault(t, "cut", a.IP, any8, strconv.Itoa(n.addrs[pg].Port))
		}
		n.hold(5*time.Second, 5*time.Second)
		for _, pg := range []string{"pg-1", "pg-2"} {
			n.fault(t, "heal", a.IP, any8, strconv.Itoa(n.addrs[pg].Port))
		}
	case "relay-broker-cut":
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		relay := n.c.ActiveRelay(ctx)
		cancel()
		if relay == "" {
			relay = "relay-1"
		}
		a := n.addrs[relay]
		f.member = relay + " from the broker"
		f.start = time.Now()
		n.fault(t, "cut", a.IP, any8, strconv.Itoa(broker.Port))
		n.hold(5*time.Second, 10*time.Second)
		n.fault(t, "heal", a.IP, any8, strconv.Itoa(broker.Port))
	case "pg-loss":
		// 20 s of loss (and 200 ms ± 100 ms delay where the kernel has
		// netem) on every Postgres link: clients, replication, Patroni.
		p1, p2 := strconv.Itoa(n.addrs["pg-1"].Port), strconv.Itoa(n.addrs["pg-2"].Port)
		f.start = time.Now()
		f.member = "Postgres links: " + n.fault(t, "netem", p1, p2)
		time.Sleep(20 * time.Second)
		n.fault(t, "unnetem", p1, p2)
	case "clock-skew":
		// A Postgres machine's wall clock jumps 30 s ahead or behind, stays
		// there, and jumps back (libfaketime under its postgres: the
		// platform's Go processes read the vDSO clock, which no LD_PRELOAD
		// reaches).
		i := n.intn(2)
		offset := "+30s"
		if n.intn(2) == 0 {
			offset = "-30s"
		}
		f.member = fmt.Sprintf("pg%d clock %s", i+1, offset)
		f.start = time.Now()
		n.fault(t, "clock", strconv.Itoa(i+1), offset)
		time.Sleep(2500 * time.Millisecond)
		if skew, err := n.memberSkew(t, i); err == nil {
			f.note = fmt.Sprintf("now() there %+.1fs from ours", skew.Seconds())
		} else {
			f.note = fmt.Sprintf("now() there not read: %v", err)
		}
		n.hold(15*time.Second, 10*time.Second)
		n.fault(t, "clock", strconv.Itoa(i+1), "+0")
	default:
		return false
	}
	f.end = time.Now()
	return true
}

// overlap injects two faults at once: a heavier one, and a light one
// starting one to three seconds into it. Each keeps its own kind and window.
func (n *nemesis) overlap(t *testing.T) []*nemesisFault {
	t.Helper()
	first := nemesisOverlapFirst[n.intn(len(nemesisOverlapFirst))]
	second := nemesisLightKinds[n.intn(len(nemesisLightKinds))]
	for second == first {
		second = nemesisLightKinds[n.intn(len(nemesisLightKinds))]
	}
	var a *nemesisFault
	done := make(chan struct{})
	go func() {
		defer close(done)
		a = n.inject(t, first)
	}()
	n.hold(time.Second, 2*time.Second)
	b := n.inject(t, second)
	<-done
	var out []*nemesisFault
	for _, f := range []*nemesisFault{a, b} {
		if f != nil {
			f.overlap = true
			out = append(out, f)
		}
	}
	if len(out) == 2 {
		out[0].note = strings2(out[0].note, "overlapping "+out[1].kind)
		out[1].note = strings2(out[1].note, "overlapping "+out[0].kind)
	}
	return out
}

func strings2(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// nemesisRTOTable logs, per fault kind, the count, the RTO (nemesisRTOs:
// median, max) and the 503s and cut answers its faults caused.
func nemesisRTOTable(t *testing.T, faults []*nemesisFault) {
	t.Helper()
	type row struct {
		n, u     int
		rtos     []time.Duration
		overlaps int
	}
	rows := map[string]*row{}
	for _, f := range faults {
		r := rows[f.kind]
		if r == nil {
			r = &row{}
			rows[f.kind] = r
		}
		r.n++
		if f.overlap {
			r.overlaps++
		}
		r.u += f.unavailable
		if f.rto >= 0 {
			r.rtos = append(r.rtos, f.rto)
		}
	}
	kinds := make([]string, 0, len(rows))
	for k := range rows {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	t.Logf("%-20s %5s %8s %10s %8s %8s", "kind", "count", "overlap", "RTO median", "RTO max", "503/cut")
	for _, k := range kinds {
		r := rows[k]
		sort.Slice(r.rtos, func(i, j int) bool { return r.rtos[i] < r.rtos[j] })
		med, mx := "-", "-"
		if len(r.rtos) > 0 {
			med = fmt.Sprintf("%.1fs", r.rtos[len(r.rtos)/2].Seconds())
			mx = fmt.Sprintf("%.1fs", r.rtos[len(r.rtos)-1].Seconds())
		}
		t.Logf("%-20s %5d %8d %10s %8s %8d", k, r.n, r.overlaps, med, mx, r.u)
	}
}
