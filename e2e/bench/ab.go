package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// pgSnapshot is what the Postgres server says at one moment: every
// database's xact_commit and the WAL insert position.
type pgSnapshot struct {
	commits map[string]int64
	lsn     uint64
	// nextXid is the next transaction id the cluster will assign: only a
	// transaction that writes takes one, so its change counts the write
	// transactions (xact_commit also counts every read-only one).
	nextXid uint64
}

// pgDelta is what a platform run cost Postgres: the commits of its own
// database, the cluster's WAL bytes (pg_stat_wal and the WAL position are
// per cluster, not per database) and, to show how much of that WAL may be
// someone else's, the commits of every other database in the same window.
type pgDelta struct {
	ok           bool
	commits      int64
	walBytes     int64
	otherCommits int64
	writeXacts   int64 // transaction ids assigned (cluster-wide, like the WAL)
}

// noisyShare is the share of other databases' commits (against the run's
// own) above which the WAL figure is flagged as polluted.
const noisyShare = 0.01

func (d pgDelta) noiseNote() string {
	if d.commits > 0 && float64(d.otherCommits) > noisyShare*float64(d.commits) {
		return ": the WAL figure includes theirs, rerun with nothing else on the cluster"
	}
	return ""
}

// sub returns the change from b to s for database db.
func (s pgSnapshot) sub(b pgSnapshot, db string) pgDelta {
	d := pgDelta{ok: true, commits: s.commits[db] - b.commits[db], walBytes: int64(s.lsn - b.lsn),
		writeXacts: int64(s.nextXid - b.nextXid)}
	for name, n := range s.commits {
		if name != db {
			// A database created in the window counts from 0; a dropped one
			// is gone from s and counts nothing.
			d.otherCommits += n - b.commits[name]
		}
	}
	return d
}

// parseLSN reads a pg_lsn's text form, "16/B374D848": the high and low 32
// bits in hexadecimal.
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("lsn %q: no /", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("lsn %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("lsn %q: %w", s, err)
	}
	return h<<32 | l, nil
}

// quietSnapshot waits until database db has no backend left (a backend
// flushes its statistics when it exits; an idle one may hold them for up to
// 10 s), then reads the snapshot over admin, a connection to another
// database.
func quietSnapshot(ctx context.Context, admin *pgxpool.Pool, db string) (pgSnapshot, error) {
	if err := waitNoBackends(ctx, admin, db); err != nil {
		return pgSnapshot{}, err
	}
	return readSnapshot(ctx, admin)
}

func waitNoBackends(ctx context.Context, admin *pgxpool.Pool, db string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, db).Scan(&n); err != nil {
			return fmt.Errorf("pg_stat_activity: %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d backends still on %s after 30 s", n, db)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readSnapshot reads every database's xact_commit, the WAL position and
// the next transaction id.
func readSnapshot(ctx context.Context, admin *pgxpool.Pool) (pgSnapshot, error) {
	// Our own statistics, and those of every backend that exited, are in
	// shared memory now; the next read must not be served from this
	// backend's snapshot cache.
	s := pgSnapshot{commits: map[string]int64{}}
	conn, err := admin.Acquire(ctx)
	if err != nil {
		return s, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		return s, fmt.Errorf("pg_stat_clear_snapshot: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT datname, xact_commit FROM pg_stat_database WHERE datname IS NOT NULL`)
	if err != nil {
		return s, fmt.Errorf("pg_stat_database: %w", err)
	}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			rows.Close()
			return s, err
		}
		s.commits[name] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, err
	}
	// pg_snapshot_xmax of a snapshot reads the next xid without taking
	// one (pg_current_xact_id would).
	var lsn, xid string
	if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text, pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&lsn, &xid); err != nil {
		return s, fmt.Errorf("pg_current_wal_lsn: %w", err)
	}
	if s.nextXid, err = strconv.ParseUint(xid, 10, 64); err != nil {
		return s, fmt.Errorf("next xid %q: %w", xid, err)
	}
	s.lsn, err = parseLSN(lsn)
	return s, err
}

// commandsPerBatch is the fiat applier's mean batch size in the run.
func (r *results) commandsPerBatch() (float64, bool) {
	if r.used.batches <= 0 || r.used.commands <= 0 {
		return 0, false
	}
	return r.used.commands / r.used.batches, true
}

// metric is one figure of a platform run that the A/B summary compares;
// value reports false when the run cannot give it (an older binary without
// a series, a counter that could not be read).
type metric struct {
	name   string
	format string
	value  func(r *results) (float64, bool)
}

var abMetrics = []metric{
	{"transfers/s", "%.1f", func(r *results) (float64, bool) { return r.throughput(), r.ok > 0 }},
	{"p50 ms", "%.1f", func(r *results) (float64, bool) { return ms(r.p(0.50)), len(r.latencies) > 0 }},
	{"p99 ms", "%.1f", func(r *results) (float64, bool) { return ms(r.p(0.99)), len(r.latencies) > 0 }},
	{"CPU platform µs/tr", "%.0f", func(r *results) (float64, bool) { return cpuPer(r.sutCPU, r.ok), r.sutCPU > 0 && r.ok > 0 }},
	{"CPU Postgres µs/tr", "%.0f", func(r *results) (float64, bool) { return cpuPer(r.used.pgCPU, r.ok), r.used.pgCPU > 0 && r.ok > 0 }},
	{"commits/tr", "%.3f", func(r *results) (float64, bool) { return perTransfer(r.pg.commits, r.ok), r.pg.ok && r.ok > 0 }},
	{"write xacts/tr", "%.3f", func(r *results) (float64, bool) { return perTransfer(r.pg.writeXacts, r.ok), r.pg.ok && r.ok > 0 }},
	{"WAL bytes/tr", "%.0f", func(r *results) (float64, bool) { return perTransfer(r.pg.walBytes, r.ok), r.pg.ok && r.ok > 0 }},
	{"fiat cmds/batch", "%.1f", (*results).commandsPerBatch},
	{"peak RSS MB", "%.0f", func(r *results) (float64, bool) { return float64(r.peakRSS) / (1 << 20), r.peakRSS > 0 }},
}

func perTransfer(n, transfers int64) float64 {
	if transfers == 0 {
		return 0
	}
	return float64(n) / float64(transfers)
}

// pairedRatios returns a/b for every round where both runs gave the metric.
func pairedRatios(rounds []round, m metric) []float64 {
	var out []float64
	for _, rd := range rounds {
		if rd.platform == nil || rd.against == nil {
			continue
		}
		a, okA := m.value(rd.platform)
		b, okB := m.value(rd.against)
		if okA && okB && b != 0 {
			out = append(out, a/b)
		}
	}
	return out
}

// values returns the metric of every run pick gives (skipping n/a).
func values(rounds []round, m metric, pick func(round) *results) []float64 {
	var out []float64
	for _, rd := range rounds {
		if r := pick(rd); r != nil {
			if v, ok := m.value(r); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func fmtOr(xs []float64, format string) string {
	if len(xs) == 0 {
		return "n/a"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, ", ")
}

// summarizeAB prints, per client count, every metric of both binaries
// round by round, their medians and the median of the per-round ratios
// platform/baseline (paired in the same round, so drift of the machine
// between rounds cancels).
func summarizeAB(o options, runs map[int][]round) {
	fmt.Printf("\n== A/B: platform (this tree) against %s (%s), ratio = median of the per-round ratios platform/%s\n", o.baselineName, o.baselineBin, o.baselineName)
	for _, n := range o.clients {
		rounds := runs[n]
		fmt.Printf("%d clients, %d round(s):\n", n, len(rounds))
		fmt.Printf("  %-20s %-28s %-28s %10s %10s %8s\n", "", "platform per round", o.baselineName+" per round", "platform", o.baselineName, "ratio")
		for _, m := range abMetrics {
			a := values(rounds, m, func(rd round) *results { return rd.platform })
			b := values(rounds, m, func(rd round) *results { return rd.against })
			fmt.Printf("  %-20s %-28s %-28s %10s %10s %8s\n", m.name, fmtOr(a, m.format), fmtOr(b, m.format),
				medianOr(a, m.format), medianOr(b, m.format), medianOr(pairedRatios(rounds, m), "%.2f"))
		}
	}
}

func medianOr(xs []float64, format string) string {
	if len(xs) == 0 {
		return "n/a"
	}
	return fmt.Sprintf(format, median(xs))
}

// check is one target of issue 38 against a figure of this sitting.
type check struct {
	name   string
	figure string
	// state is PASS, MISS or N/A (not measured in this sitting).
	state string
}

// atLeast and atMost judge a measured figure against a target.
func atLeast(v, target float64) string { return passMiss(v >= target) }
func atMost(v, target float64) string  { return passMiss(v <= target) }

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// primaryClients is the client count the targets are judged at: 32 when
// measured, else the first.
func primaryClients(clients []int) int {
	if slices.Contains(clients, 32) {
		return 32
	}
	return clients[0]
}

// evalTargets judges issue 38's targets: at the primary client count, the
// median over the rounds of platform/T, platform/S and p99, the highest
// peak RSS, the soak's last minute against its first, and over every run
// that every transfer settled and money was conserved; with -baseline-bin
// also commits and WAL bytes per transfer against the baseline binary's
// (median of the paired ratios).
func evalTargets(o options, runs map[int][]round, failures []string) []check {
	n := primaryClients(o.clients)
	rounds := runs[n]
	var out []check
	ratio := func(kind string, target float64) {
		name := fmt.Sprintf("platform/%s >= %.1f", kind, target)
		var rs []float64
		for _, rd := range rounds {
			if b := rd.base[kind]; b != nil && rd.platform != nil && b.throughput() > 0 {
				rs = append(rs, rd.platform.throughput()/b.throughput())
			}
		}
		if len(rs) == 0 {
			out = append(out, check{name, "not measured (-baselines)", "N/A"})
			return
		}
		m := median(rs)
		out = append(out, check{name, fmt.Sprintf("%.2f", m), atLeast(m, target)})
	}
	ratio("T", 0.7)
	ratio("S", 2.5)
	var p99, rss []float64
	for _, rd := range rounds {
		if rd.platform != nil {
			p99 = append(p99, ms(rd.platform.p(0.99)))
			if rd.platform.peakRSS > 0 {
				rss = append(rss, float64(rd.platform.peakRSS)/(1<<20))
			}
		}
	}
	if len(p99) > 0 {
		m := median(p99)
		out = append(out, check{"p99 <= 40 ms", fmt.Sprintf("%.1f ms", m), atMost(m, 40)})
	}
	if len(rss) > 0 {
		m := slices.Max(rss)
		out = append(out, check{"peak RSS <= 256 MB", fmt.Sprintf("%.0f MB (highest run)", m), atMost(m, 256)})
	} else {
		out = append(out, check{"peak RSS <= 256 MB", "n/a", "N/A"})
	}
	soak := check{"soak last/first minute >= 0.95", "not measured (make bench-soak)", "N/A"}
	if o.soak {
		for _, rd := range rounds {
			if rd.platform != nil && len(rd.platform.perMinute) >= 2 && rd.platform.perMinute[0] > 0 {
				pm := rd.platform.perMinute
				v := float64(pm[len(pm)-1]) / float64(pm[0])
				soak = check{soak.name, fmt.Sprintf("%.2f", v), atLeast(v, 0.95)}
			}
		}
	}
	out = append(out, soak)
	var started, settled int64
	conserved, runsSeen := true, 0
	for _, c := range o.clients {
		for _, rd := range runs[c] {
			if rd.platform == nil {
				continue
			}
			runsSeen++
			started += rd.platform.attempted
			settled += rd.platform.ok
			conserved = conserved && rd.platform.conserved && rd.platform.unexpected() == 0
		}
	}
	if runsSeen > 0 {
		out = append(out, check{"every transfer settled", fmt.Sprintf("%d of %d", settled, started), passMiss(settled == started && started > 0)})
		out = append(out, check{"conservation held, no answer but 200", fmt.Sprintf("%d run(s), %d failure(s)", runsSeen, len(failures)), passMiss(conserved && len(failures) == 0)})
	}
	if o.baselineBin != "" {
		for _, t := range []struct {
			metric string
			target float64
			label  string
		}{{"commits/tr", 0.5, "commits/transfer <= 0.50 x " + o.baselineName}, {"WAL bytes/tr", 0.7, "WAL bytes/transfer <= 0.70 x " + o.baselineName}} {
			i := slices.IndexFunc(abMetrics, func(m metric) bool { return m.name == t.metric })
			rs := pairedRatios(rounds, abMetrics[i])
			if len(rs) == 0 {
				out = append(out, check{t.label, "n/a", "N/A"})
				continue
			}
			m := median(rs)
			out = append(out, check{t.label, fmt.Sprintf("%.2f", m), atMost(m, t.target)})
		}
	}
	return out
}

func printTargets(cs []check) {
	fmt.Println("\n== targets (issue 38: at 32 clients when measured, else the first -clients; ratios and p99 are medians over the rounds)")
	for _, c := range cs {
		fmt.Printf("%-4s %-42s %s\n", c.state, c.name, c.figure)
	}
}
