package main

// make bench-cluster: the money-path load through HAProxy against the local
// cluster (deploy/local/cluster.sh: two gateways, two processes of every
// consumer group, two relays, the broker as its own process, Patroni with a
// synchronous standby, etcd), in several shapes one after another on the
// same cluster: synchronous replication on and off (Patroni's
// synchronous_mode, PATCH /config), and 1, 2 and 3 processes of the fiat
// applier (CLUSTER_PROCESSES=fiat-applier=N). Every shape is measured as a platform
// run of `make bench` is (throughput with the drain to lag 0, p50/p99,
// conservation), plus the CPU of every process of the cluster from its pid
// files and /proc, and the primary's commits and WAL.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/topics"
)

var clusterOpt struct {
	on   bool
	fiat string
	sync string
}

func init() {
	flag.BoolVar(&clusterOpt.on, "cluster", false, "run the load through HAProxy against a fresh local cluster (deploy/local/cluster.sh; CLUSTER_PORT_BASE, CLUSTER_NET) in the shapes of -cluster-sync and -cluster-fiat, instead of `platform run`")
	flag.StringVar(&clusterOpt.fiat, "cluster-fiat", "2,1,3", "with -cluster: fiat applier process counts; the first is measured with every -cluster-sync mode, the others with synchronous replication on")
	flag.StringVar(&clusterOpt.sync, "cluster-sync", "on,off", "with -cluster: synchronous replication modes (Patroni synchronous_mode) measured with the first -cluster-fiat count")
}

// clusterShape is one configuration the cluster is measured in.
type clusterShape struct {
	sync bool
	fiat int
}

func (s clusterShape) String() string {
	return fmt.Sprintf("sync %s, %d fiat", map[bool]string{true: "on", false: "off"}[s.sync], s.fiat)
}

// clusterShapes expands -cluster-sync and -cluster-fiat.
func clusterShapes(syncModes, fiat string) ([]clusterShape, error) {
	var counts []int
	for _, f := range strings.Split(fiat, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 12 {
			return nil, fmt.Errorf("-cluster-fiat %q: counts from 1 to 12", fiat)
		}
		counts = append(counts, n)
	}
	var modes []bool
	for _, m := range strings.Split(syncModes, ",") {
		switch strings.TrimSpace(m) {
		case "on":
			modes = append(modes, true)
		case "off":
			modes = append(modes, false)
		default:
			return nil, fmt.Errorf("-cluster-sync %q: on, off or both", syncModes)
		}
	}
	var out []clusterShape
	for _, m := range modes {
		out = append(out, clusterShape{sync: m, fiat: counts[0]})
	}
	for _, n := range counts[1:] {
		s := clusterShape{sync: true, fiat: n}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// clusterRun is one shape's measurements.
type clusterRun struct {
	shape   clusterShape
	clients int
	res     *results
	cpu     map[string]time.Duration // by role (clusterRoles)
	pg      pgDelta                  // the primary's, idle rate taken off
	walStat int64                    // pg_stat_wal.wal_bytes, idle rate taken off
	fiat    fiatCounters
	// idleCommits is the platform database's commits per second with no
	// load (the cluster's processes' own polling): the window's commits
	// hold them too, as in make bench.
	idleCommits float64
	// idleCPU is each role's CPU with no load, in cores (the fixed cost:
	// polling, health checks, scrapes, Patroni's loop)
	idleCPU map[string]float64
	// busy and cpus are the machine's busy and total CPU time over the
	// load and the drain (machineCPU).
	busy, cpus time.Duration
}

// fiatCounters are the fiat applier's batch counters summed over its
// processes.
type fiatCounters struct{ batches, commands, roundTrips float64 }

func runCluster(o options) int {
	shapes, err := clusterShapes(clusterOpt.sync, clusterOpt.fiat)
	if err != nil {
		usage("%v", err)
	}
	ptb := harness.NewProcessTB()
	defer ptb.Close()
	ctx := context.Background()
	var names []string
	for _, sh := range shapes {
		names = append(names, sh.String())
	}
	fmt.Printf("bench -cluster: %s, %d users, clients %v, %d round(s) of [%s], %s load + drain per shape\n",
		time.Now().UTC().Format(time.RFC3339), o.users, o.clients, o.rounds, strings.Join(names, "; "), o.duration)
	fmt.Printf("machine: %d cores, load average %s\n", runtime.NumCPU(), loadAvg())
	step("starting the local cluster (deploy/local/cluster.sh up; CLUSTER_PORT_BASE " + os.Getenv("CLUSTER_PORT_BASE") + ", CLUSTER_NET " + os.Getenv("CLUSTER_NET") + ")")
	failed := false
	extra := map[string]string{
		"FIAT_CAP_PER_TRANSFER":  "1000000000000000",
		"FIAT_CAP_DAILY_DEPOSIT": "1000000000000000",
		"FIAT_CAP_MONTHLY":       "1000000000000000",
		"LATENCY_HOPS":           "1",
	}
	for k, v := range o.env {
		extra[k] = v
	}
	_, c := harness.StartProxied(ptb, func() bool { return failed }, extra)
	fmt.Printf("cluster: %s, API %s (HAProxy), broker %s\n", c.Dir, c.URL(), c.KafkaAddr())

	db, err := pgxpool.New(ctx, c.DatabaseURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer db.Close()
	describeClusterPG(ctx, db)
	lags, err := newLagReader([]string{c.KafkaAddr()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer lags.Close()
	cl, err := newClient(c.URL(), slices.Max(o.clients))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	step(fmt.Sprintf("registering %d users and funding their KZT wallets through the signed deposit webhook (via HAProxy)", o.users))
	accounts, err := cl.setup(o.users, o.deposit, c.Secret("PROCESSOR_WEBHOOK_SECRET"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: setup:", err)
		failed = true
		return 1
	}
	height, err := ledgerHeight(ctx, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: ledger height:", err)
		return 1
	}
	if height < int64(o.users) {
		height = int64(o.users)
	}
	if _, err := lags.drain(ctx, db, height, o.drainTimeout); err != nil {
		fmt.Fprintln(os.Stderr, "bench: after setup:", err)
		failed = true
		return 1
	}

	var runs []clusterRun
	var failures []string
	var ackFees int64
	for r := 1; r <= o.rounds; r++ {
		for _, sh := range shapes {
			for _, n := range o.clients {
				step(fmt.Sprintf("round %d/%d, %d clients, %s: shaping the cluster", r, o.rounds, n, sh))
				if err := shapeCluster(ctx, c, db, lags, sh); err != nil {
					fmt.Fprintln(os.Stderr, "bench:", err)
					failed = true
					return 1
				}
				run, err := clusterLoad(ctx, c, db, lags, cl, accounts, o, sh, n, r, &height)
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench:", err)
					failed = true
					return 1
				}
				ackFees += run.res.fees
				run.res.conserved, err = conservation(ctx, db, o, ackFees)
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench: conservation:", err)
					return 1
				}
				printClusterRun(run)
				for _, p := range run.res.problems(o) {
					failures = append(failures, fmt.Sprintf("round %d, %d clients, %s: %s", r, n, sh, p))
				}
				runs = append(runs, run)
			}
		}
	}
	summarizeCluster(o, shapes, runs, failures)
	if len(failures) > 0 {
		failed = true
		return 1
	}
	return 0
}

// describeClusterPG prints the primary's settings that matter.
func describeClusterPG(ctx context.Context, db *pgxpool.Pool) {
	var settings []string
	for _, name := range []string{"server_version", "synchronous_commit", "synchronous_standby_names", "fsync", "shared_buffers", "max_wal_size", "archive_mode", "archive_timeout"} {
		var v string
		if err := db.QueryRow(ctx, "SHOW "+name).Scan(&v); err == nil {
			settings = append(settings, name+"="+v)
		}
	}
	fmt.Printf("postgres primary: %s\n", strings.Join(settings, " "))
}

// shapeCluster sets synchronous replication and the fiat applier's process
// count, and waits until both hold: the primary's synchronous_standby_names
// (empty when off; the standby streaming as sync when on) and the fiat
// group Stable with that many members.
func shapeCluster(ctx context.Context, c *harness.LocalCluster, db *pgxpool.Pool, lags *lagReader, sh clusterShape) error {
	if err := patroniSyncMode(c, sh.sync); err != nil {
		return err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var names string
		err := db.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&names)
		if err == nil && (sh.sync && names != "" && c.Replicated() || !sh.sync && names == "") {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("synchronous replication %v not in place after 90 s (synchronous_standby_names %q, %v)", sh.sync, names, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.SetScriptEnv("CLUSTER_PROCESSES=fiat-applier=" + strconv.Itoa(sh.fiat))
	if out, err := c.Script("up"); err != nil {
		return fmt.Errorf("cluster.sh up with CLUSTER_PROCESSES=fiat-applier=%d: %v\n%s", sh.fiat, err, lastLines(string(out), 20))
	}
	deadline = time.Now().Add(2 * time.Minute)
	for {
		gs, err := lags.adm.DescribeGroups(ctx, topics.GroupFiat)
		g, ok := gs[topics.GroupFiat]
		if err == nil && ok && g.Err == nil && g.State == "Stable" && len(g.Members) == sh.fiat {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fiat applier group not Stable with %d members after 2 min (state %q, %d members, %v)", sh.fiat, g.State, len(g.Members), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// patroniSyncMode sets Patroni's synchronous_mode (PATCH /config on any
// member: the configuration lives in etcd).
func patroniSyncMode(c *harness.LocalCluster, on bool) error {
	body, _ := json.Marshal(map[string]bool{"synchronous_mode": on})
	var last error
	for _, u := range c.PatroniURLs {
		req, err := http.NewRequest(http.MethodPatch, u+"/config", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.SetBasicAuth(c.PatroniUser, c.PatroniPassword)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("PATCH %s/config: %s", u, resp.Status)
	}
	return last
}

// clusterLoad measures one shape: the idle rate of commits and WAL over
// -stats-settle, the load and its drain, then -stats-settle again so that
// every backend's statistics are flushed; the idle rate times that tail is
// taken off the window's commits, write transactions and WAL.
func clusterLoad(ctx context.Context, c *harness.LocalCluster, db *pgxpool.Pool, lags *lagReader, cl *client,
	accounts []account, o options, sh clusterShape, n, r int, height *int64) (clusterRun, error) {
	run := clusterRun{shape: sh, clients: n}
	settle := max(o.statsSettle, time.Second)
	step(fmt.Sprintf("%s: %s for the statistics to be flushed, then %s idle for the background rate", sh, settle, settle))
	time.Sleep(settle)
	idle0, err := readSnapshot(ctx, db)
	if err != nil {
		return run, err
	}
	w0 := walStatBytes(ctx, db)
	icpu0, it0 := clusterCPU(c), time.Now()
	time.Sleep(settle)
	icpu1, it1 := clusterCPU(c), time.Now()
	s0, err := readSnapshot(ctx, db)
	if err != nil {
		return run, err
	}
	w1 := walStatBytes(ctx, db)
	run.idleCPU = map[string]float64{}
	var idleParts []string
	for _, k := range clusterRoles {
		if d := icpu1[k] - icpu0[k]; d > 0 {
			run.idleCPU[k] = d.Seconds() / it1.Sub(it0).Seconds()
			idleParts = append(idleParts, fmt.Sprintf("%s %.0f%%", k, 100*run.idleCPU[k]))
		}
	}
	fmt.Printf("  idle CPU (share of a core): %s\n", strings.Join(idleParts, ", "))
	idle := s0.sub(idle0, "platform")
	idleWal := w1 - w0
	run.idleCommits = float64(idle.commits) / settle.Seconds()
	fmt.Printf("  idle, %s: %d commits, %d write transactions, %d WAL bytes (pg_stat_wal %d) on the primary\n",
		settle, idle.commits, idle.writeXacts, idle.walBytes, idleWal)

	fiatAddrs := clusterMetrics(c, "fiat-applier-")
	fiat0 := readFiat(fiatAddrs)
	cpu0 := clusterCPU(c)
	gen0 := selfCPU()
	busy0, cpus0 := machineCPU()
	step(fmt.Sprintf("round %d, %d clients, %s: load for %s through HAProxy, then drain to lag 0 (load %s)", r, n, sh, o.duration, loadAvg()))
	res := cl.load(accounts, n, o, fmt.Sprintf("c%s-r%dc%d-%d", strings.ReplaceAll(sh.String(), " ", ""), r, n, time.Now().UnixNano()))
	res.genCPU = selfCPU() - gen0
	*height += res.ok
	lag0, _ := lags.lagOf(ctx)
	fmt.Printf("  lag when the load stopped: %s\n", formatLag(lag0))
	lag, drainErr := lags.drain(ctx, db, *height, o.drainTimeout)
	res.elapsed = time.Since(res.start)
	res.drainTime = res.elapsed - res.loadTime
	cpu1 := clusterCPU(c)
	busy1, cpus1 := machineCPU()
	run.busy, run.cpus = busy1-busy0, cpus1-cpus0
	run.fiat = readFiat(fiatAddrs).sub(fiat0)
	fmt.Printf("  drained in %.2fs, lag now: %s\n", res.drainTime.Seconds(), formatLag(lag))
	if drainErr != nil {
		return run, fmt.Errorf("drain: %w (logs in %s/log)", drainErr, c.Dir)
	}
	time.Sleep(settle)
	s1, err := readSnapshot(ctx, db)
	if err != nil {
		return run, err
	}
	w2 := walStatBytes(ctx, db)
	run.pg = s1.sub(s0, "platform")
	// the tail after the drain was idle: take its share off
	tail := float64(time.Since(res.start)-res.elapsed) / float64(settle)
	run.pg.commits -= int64(tail * float64(idle.commits))
	run.pg.writeXacts -= int64(tail * float64(idle.writeXacts))
	run.pg.walBytes -= int64(tail * float64(idle.walBytes))
	run.walStat = w2 - w1 - int64(tail*float64(idleWal))
	run.cpu = map[string]time.Duration{}
	for k, v := range cpu1 {
		if d := v - cpu0[k]; d > 0 {
			run.cpu[k] = d
		}
	}
	run.res = res
	return run, nil
}

// walStatBytes is pg_stat_wal.wal_bytes: WAL records generated, without
// the padding of a segment switch (archive_timeout) that the LSN counts.
func walStatBytes(ctx context.Context, db *pgxpool.Pool) int64 {
	var n int64
	_ = db.QueryRow(ctx, `SELECT wal_bytes::bigint FROM pg_stat_wal`).Scan(&n)
	return n
}

// clusterMetrics returns the metrics addresses of the members whose name
// starts with prefix (from `cluster.sh env`).
func clusterMetrics(c *harness.LocalCluster, prefix string) map[string]string {
	out, _ := c.Script("env")
	m := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, "# metrics of ")
		if !ok {
			continue
		}
		name, url, ok := strings.Cut(rest, ": ")
		if ok && strings.HasPrefix(name, prefix) {
			m[name] = strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics")
		}
	}
	return m
}

// fiatByProcess is the fiat counters of each process.
type fiatByProcess map[string]fiatCounters

func readFiat(addrs map[string]string) fiatByProcess {
	out := fiatByProcess{}
	match := map[string]string{"group": topics.GroupFiat}
	for name, addr := range addrs {
		fams, err := scrape(addr)
		if err != nil {
			continue
		}
		out[name] = fiatCounters{batches: sumOf(fams, "platform_consumer_batch_size", match),
			commands: histSum(fams, "platform_consumer_batch_size", match), roundTrips: sumOf(fams, "platform_consumer_roundtrips_total", match)}
	}
	return out
}

// sub sums each process's change (a process started in between counts
// from 0).
func (a fiatByProcess) sub(b fiatByProcess) fiatCounters {
	var t fiatCounters
	for name, v := range a {
		w := b[name]
		t.batches += v.batches - w.batches
		t.commands += v.commands - w.commands
		t.roundTrips += v.roundTrips - w.roundTrips
	}
	return t
}

// clusterRoles orders the CPU report: the platform's processes by role,
// then the Postgres servers and the rest of the cluster.
var clusterRoles = []string{"gateway", "fiat-applier", "other consumers", "relay", "broker", "platform", "pg primary", "pg standby", "haproxy", "patroni+etcd", "prometheus+alertmanager"}

// clusterCPU reads the CPU time so far of every process of the cluster, by
// role: its pid files (run/*.pid) and the postmasters' (postmaster.pid),
// /proc for the times. "platform" is the sum of every platform process,
// the broker's included.
func clusterCPU(c *harness.LocalCluster) map[string]time.Duration {
	out := map[string]time.Duration{}
	files, _ := filepath.Glob(filepath.Join(c.Dir, "run", "*.pid"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		pid := c.Pid(name)
		if pid <= 0 {
			continue
		}
		cpu := procCPU(pid)
		role := ""
		switch {
		case strings.HasPrefix(name, "gateway-"):
			role = "gateway"
		case strings.HasPrefix(name, "fiat-applier-"):
			role = "fiat-applier"
		case strings.HasPrefix(name, "relay-"):
			role = "relay"
		case name == "broker":
			role = "broker"
		case name == "haproxy":
			out["haproxy"] += cpu
			continue
		case name == "etcd", strings.HasPrefix(name, "patroni-"):
			out["patroni+etcd"] += cpu
			continue
		case name == "prometheus", name == "alertmanager":
			out["prometheus+alertmanager"] += cpu
			continue
		default:
			role = "other consumers"
		}
		out[role] += cpu
		out["platform"] += cpu
	}
	primary := c.Primary()
	for i := 0; i < 2; i++ {
		role := "pg standby"
		if i == primary {
			role = "pg primary"
		}
		out[role] += serverCPU(c.PostmasterPid(i))
	}
	return out
}

func printClusterRun(run clusterRun) {
	r := run.res
	fmt.Printf("  %-22s %8.1f transfers/s  (%d in %.1fs = %.1fs load + %.2fs drain, %d clients via HAProxy)\n",
		run.shape, r.throughput(), r.ok, r.elapsed.Seconds(), r.loadTime.Seconds(), r.drainTime.Seconds(), run.clients)
	fmt.Printf("  %-22s p50 %.1fms  p95 %.1fms  p99 %.1fms\n", "latency", ms(r.p(0.50)), ms(r.p(0.95)), ms(r.p(0.99)))
	printBudget(r)
	if run.cpus > 0 {
		fmt.Printf("  %-22s %.0f%% of all %d cores busy over the load and drain (/proc/stat)\n",
			"machine", 100*float64(run.busy)/float64(run.cpus), runtime.NumCPU())
	}
	var parts []string
	for _, k := range clusterRoles {
		if d, ok := run.cpu[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f (%.0f%%)", k, cpuPer(d, r.ok), 100*d.Seconds()/r.elapsed.Seconds()))
		}
	}
	parts = append(parts, fmt.Sprintf("load generator %.0f (%.0f%%)", cpuPer(r.genCPU, r.ok), 100*r.genCPU.Seconds()/r.elapsed.Seconds()))
	fmt.Printf("  %-22s µs/transfer (share of a core): %s\n", "CPU", strings.Join(parts, ", "))
	n := float64(r.ok)
	if n > 0 {
		fmt.Printf("  %-22s %.3f commits, %.3f write transactions, %.0f WAL bytes (pg_stat_wal; LSN %.0f) on the primary; other databases committed %d\n",
			"per transfer", float64(run.pg.commits)/n, float64(run.pg.writeXacts)/n, float64(run.walStat)/n, float64(run.pg.walBytes)/n, run.pg.otherCommits)
	}
	if run.fiat.batches > 0 {
		fmt.Printf("  %-22s %.1f commands per batch over %d process(es), %.2f Postgres round trips per batch\n",
			"fiat applier", run.fiat.commands/run.fiat.batches, run.shape.fiat, run.fiat.roundTrips/run.fiat.batches)
	}
	fmt.Printf("  %-22s %d of %d started (%.2f%%); 503 retries (same key) %d; answers %v; transport errors %d\n",
		"settled", r.ok, r.attempted, 100*r.settledShare(), r.retries, r.byStatus, r.transport)
	if len(r.byCode) > 0 {
		fmt.Printf("  %-22s %v\n", "not 200", r.byCode)
	}
}

// summarizeCluster prints one row per shape and client count (medians over
// the rounds), in the README's table's columns.
func summarizeCluster(o options, shapes []clusterShape, runs []clusterRun, failures []string) {
	fmt.Printf("\n== cluster summary: %d round(s), clock includes the drain to lag 0; CPU in µs per transfer\n", o.rounds)
	fmt.Println("| shape | clients | transfers/s | p50 / p99 ms | platform CPU | gw / fiat / other cons. / relay / broker | pg primary + standby | haproxy | commits/tr (idle /s) | write xacts/tr | WAL B/tr | fiat cmds/batch | idle CPU platform + pg primary, % of a core |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, sh := range shapes {
		for _, n := range o.clients {
			var tp, p50, p99, plat, gw, fiat, other, relay, broker, pgp, pgs, hap, com, wx, wal, cmds, idle, iplat, ipg []float64
			for _, run := range runs {
				if run.shape != sh || run.clients != n || run.res.ok == 0 {
					continue
				}
				r := run.res
				per := func(k string) float64 { return cpuPer(run.cpu[k], r.ok) }
				tp = append(tp, r.throughput())
				p50 = append(p50, ms(r.p(0.50)))
				p99 = append(p99, ms(r.p(0.99)))
				plat, gw, fiat = append(plat, per("platform")), append(gw, per("gateway")), append(fiat, per("fiat-applier"))
				other, relay, broker = append(other, per("other consumers")), append(relay, per("relay")), append(broker, per("broker"))
				pgp, pgs, hap = append(pgp, per("pg primary")), append(pgs, per("pg standby")), append(hap, per("haproxy"))
				k := float64(r.ok)
				com = append(com, float64(run.pg.commits)/k)
				idle = append(idle, run.idleCommits)
				iplat, ipg = append(iplat, 100*run.idleCPU["platform"]), append(ipg, 100*run.idleCPU["pg primary"])
				wx = append(wx, float64(run.pg.writeXacts)/k)
				wal = append(wal, float64(run.walStat)/k)
				if run.fiat.batches > 0 {
					cmds = append(cmds, run.fiat.commands/run.fiat.batches)
				}
			}
			if len(tp) == 0 {
				continue
			}
			fmt.Printf("| %s | %d | %.1f | %.1f / %.1f | %.0f | %.0f / %.0f / %.0f / %.0f / %.0f | %.0f + %.0f | %.0f | %.3f (%.0f) | %.3f | %.0f | %s | %.0f + %.0f |\n",
				sh, n, median(tp), median(p50), median(p99), median(plat), median(gw), median(fiat), median(other), median(relay), median(broker),
				median(pgp), median(pgs), median(hap), median(com), median(idle), median(wx), median(wal), orDash(cmds, "%.1f"), median(iplat), median(ipg))
		}
	}
	if len(failures) == 0 {
		fmt.Printf("checks: every run conserved money, >= %.0f%% of the transfers settled, no answer but 200 and retried 503s: OK\n", 100*o.minSettled)
		return
	}
	fmt.Println("checks: FAILED")
	for _, f := range failures {
		fmt.Println("  " + f)
	}
}

// register is POST /api/auth/register, sent again (up to a minute) while
// it is answered 429: the gateway turns a registration away when every
// password-hashing slot stayed busy for its wait (argon2id, a core for tens
// of milliseconds each), which a loaded machine with two gateways reaches.
func (c *client) register(email string, out any) (int, []byte, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		st, raw, err := c.call("POST", "/api/auth/register", "", map[string]string{"email": email, "password": "bench-password-1"}, out)
		if err != nil || st != http.StatusTooManyRequests || time.Now().After(deadline) {
			return st, raw, err
		}
		time.Sleep(time.Second)
	}
}
