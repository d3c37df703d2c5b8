package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fintech/platform/e2e/harness"
)

func TestParseLSN(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"0/0", 0},
		{"0/16B3748", 0x16B3748},
		{"16/B374D848", 0x16_B374D848},
		{" 1/20498000\n", 1<<32 | 0x20498000},
	} {
		got, err := parseLSN(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseLSN(%q) = %#x, %v; want %#x", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "16B374D848", "x/1", "1/y", "1/100000000"} {
		if _, err := parseLSN(bad); err == nil {
			t.Errorf("parseLSN(%q) took a malformed LSN", bad)
		}
	}
	// The WAL between two positions across a 4 GiB segment boundary.
	a, _ := parseLSN("0/FFFFFF00")
	b, _ := parseLSN("1/00000100")
	if b-a != 0x200 {
		t.Errorf("1/100 - 0/FFFFFF00 = %d bytes, want 512", b-a)
	}
}

// The run's own database's commits, the cluster's WAL and xids, and the
// other databases' commits as noise (a database created in the window
// counts from 0, a dropped one nothing).
func TestSnapshotSub(t *testing.T) {
	before := pgSnapshot{commits: map[string]int64{"bench_a": 100, "other": 1_000, "dropped": 50}, lsn: 5_000, nextXid: 70}
	after := pgSnapshot{commits: map[string]int64{"bench_a": 1_100, "other": 1_004, "t_new": 3}, lsn: 905_000, nextXid: 570}
	d := after.sub(before, "bench_a")
	want := pgDelta{ok: true, commits: 1_000, walBytes: 900_000, otherCommits: 7, writeXacts: 500}
	if d != want {
		t.Fatalf("delta %+v, want %+v", d, want)
	}
	if d.noiseNote() != "" {
		t.Errorf("7 other commits against 1,000 flagged as noise: %q", d.noiseNote())
	}
	d.otherCommits = 11
	if d.noiseNote() == "" {
		t.Error("11 other commits against 1,000 (over 1%) not flagged")
	}
}

func TestAlternate(t *testing.T) {
	s := []subject{{name: "platform"}, {name: "old", bin: "/x"}}
	for r, want := range map[int]string{1: "platform,old", 2: "old,platform", 3: "platform,old", 4: "old,platform"} {
		got := alternate(s, r)
		if names := got[0].name + "," + got[1].name; names != want {
			t.Errorf("round %d: %s, want %s", r, names, want)
		}
	}
	if s[0].name != "platform" {
		t.Error("alternate reordered its argument")
	}
}

// fakeRun is a settled, conserved platform run of n transfers in secs
// seconds with latency lat, commits and WAL per transfer, and RSS in MB.
func fakeRun(n int64, secs float64, lat time.Duration, commits, wal int64, rssMB int64) *results {
	r := &results{ok: n, attempted: n, elapsed: time.Duration(secs * float64(time.Second)), conserved: true,
		byStatus: map[int]int64{200: n}, peakRSS: rssMB << 20,
		pg: pgDelta{ok: true, commits: commits * n, walBytes: wal * n}}
	for range 100 {
		r.latencies = append(r.latencies, lat)
	}
	return r
}

func TestPairedRatiosAndMedian(t *testing.T) {
	tput := abMetrics[0]
	commits := abMetrics[slicesIndex("commits/tr")]
	rounds := []round{
		{platform: fakeRun(300, 1, time.Millisecond, 1, 10, 100), against: fakeRun(100, 1, time.Millisecond, 4, 10, 100)},
		{platform: fakeRun(200, 1, time.Millisecond, 1, 10, 100), against: fakeRun(100, 1, time.Millisecond, 2, 10, 100)},
		// The other binary could not run: no ratio from this round.
		{platform: fakeRun(900, 1, time.Millisecond, 1, 10, 100)},
		{platform: fakeRun(100, 1, time.Millisecond, 1, 10, 100), against: fakeRun(100, 1, time.Millisecond, 1, 10, 100)},
	}
	if got := pairedRatios(rounds, tput); len(got) != 3 || median(got) != 2 {
		t.Errorf("throughput ratios %v (median %v), want 3 ratios, median 2", got, median(got))
	}
	if got := median(pairedRatios(rounds, commits)); got != 0.5 {
		t.Errorf("commits ratio median %v, want 0.5", got)
	}
	// A binary that cannot give a metric is n/a, not 0.
	rounds[0].against.pg.ok = false
	if got := pairedRatios(rounds, commits); len(got) != 2 {
		t.Errorf("ratios with one n/a: %v, want 2", got)
	}
	if got := fmtOr(values(rounds, commits, func(rd round) *results { return rd.against }), "%.1f"); got != "2.0, 1.0" {
		t.Errorf("baseline commits per round %q", got)
	}
	if medianOr(nil, "%.1f") != "n/a" {
		t.Error("median of nothing is not n/a")
	}
}

func slicesIndex(name string) int {
	for i, m := range abMetrics {
		if m.name == name {
			return i
		}
	}
	panic(name)
}

func states(cs []check) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.name] = c.state + " " + c.figure
	}
	return out
}

func TestEvalTargets(t *testing.T) {
	o := options{clients: []int{8, 32}, baselines: []string{"T", "S"}, baselineBin: "/old", baselineName: "old"}
	base := func(tput int64) *results { return &results{ok: tput, elapsed: time.Second} }
	// At 32 clients, per round: platform/T 0.7, 0.5, 0.8 (median 0.7: PASS
	// at the boundary), platform/S 2.8, 2.0, 3.2 (median 2.8), p99 40 ms,
	// 41, 39 (median 40: PASS), RSS 200, 257, 100 (highest 257: MISS),
	// commits/transfer against old 0.5 each (PASS), WAL 0.8 (MISS).
	runs := map[int][]round{
		8: {{platform: fakeRun(10, 1, 500*time.Millisecond, 1, 8, 999)}},
		32: {
			{platform: fakeRun(700, 1, 40*time.Millisecond, 1, 8, 200), against: fakeRun(700, 1, time.Millisecond, 2, 10, 100),
				base: map[string]*results{"T": base(1000), "S": base(250)}},
			{platform: fakeRun(500, 1, 41*time.Millisecond, 1, 8, 257), against: fakeRun(500, 1, time.Millisecond, 2, 10, 100),
				base: map[string]*results{"T": base(1000), "S": base(250)}},
			{platform: fakeRun(800, 1, 39*time.Millisecond, 1, 8, 100), against: fakeRun(800, 1, time.Millisecond, 2, 10, 100),
				base: map[string]*results{"T": base(1000), "S": base(250)}},
		},
	}
	got := states(evalTargets(o, runs, nil))
	for name, want := range map[string]string{
		"platform/T >= 0.7":                "PASS 0.70",
		"platform/S >= 2.5":                "PASS 2.80",
		"p99 <= 40 ms":                     "PASS 40.0 ms",
		"peak RSS <= 256 MB":               "MISS 257 MB (highest run)",
		"soak last/first minute >= 0.95":   "N/A not measured (make bench-soak)",
		"every transfer settled":           "PASS 2010 of 2010",
		"commits/transfer <= 0.50 x old":   "PASS 0.50",
		"WAL bytes/transfer <= 0.70 x old": "MISS 0.80",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if !strings.HasPrefix(got["conservation held, no answer but 200"], "PASS") {
		t.Errorf("conservation: %q", got["conservation held, no answer but 200"])
	}

	// One transfer short of all settled, a conservation failure, a p99
	// over, a soak at 0.94, no baselines: MISS and N/A.
	runs[32][1].platform.attempted++
	runs[8][0].platform.conserved = false
	for i := range runs[32] {
		runs[32][i].platform.latencies = append(runs[32][i].platform.latencies, time.Second, time.Second)
		runs[32][i].base = nil
	}
	runs[32][0].platform.perMinute = []int64{100, 120, 94}
	o.soak, o.baselines, o.baselineBin = true, nil, ""
	got = states(evalTargets(o, runs, []string{"round 1, 8 clients: platform conservation violated"}))
	for name, want := range map[string]string{
		"platform/T >= 0.7":              "N/A not measured (-baselines)",
		"p99 <= 40 ms":                   "MISS 1000.0 ms",
		"soak last/first minute >= 0.95": "MISS 0.94",
		"every transfer settled":         "MISS 2010 of 2011",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if !strings.HasPrefix(got["conservation held, no answer but 200"], "MISS") {
		t.Errorf("conservation: %q", got["conservation held, no answer but 200"])
	}
	if _, ok := got["commits/transfer <= 0.50 x old"]; ok {
		t.Error("commit target judged without a -baseline-bin")
	}
}

// Commands per batch is the fiat group's batch-size sum over its count;
// other groups' batches do not count.
func TestCommandsPerBatch(t *testing.T) {
	text := `# TYPE platform_consumer_batch_size histogram
platform_consumer_batch_size_bucket{group="fiat-applier",le="+Inf"} 4
platform_consumer_batch_size_sum{group="fiat-applier"} 38
platform_consumer_batch_size_count{group="fiat-applier"} 4
platform_consumer_batch_size_bucket{group="ledger-appender",le="+Inf"} 1
platform_consumer_batch_size_sum{group="ledger-appender"} 500
platform_consumer_batch_size_count{group="ledger-appender"} 1
`
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	fiat := map[string]string{"group": "fiat-applier"}
	r := &results{used: cost{batches: sumOf(fams, "platform_consumer_batch_size", fiat), commands: histSum(fams, "platform_consumer_batch_size", fiat)}}
	if v, ok := r.commandsPerBatch(); !ok || v != 9.5 {
		t.Errorf("commands per batch %v %v, want 9.5", v, ok)
	}
	if _, ok := (&results{}).commandsPerBatch(); ok {
		t.Error("a run without the series gives a figure")
	}
}

// The pairing end to end on the local stack: the current binary against a
// second binary (here the same one: what is proved is the machinery, not a
// difference), one short round; both sides give every figure, the ratios
// and the target lines are printed.
func TestABPairingSmoke(t *testing.T) {
	bin := harness.Binary(t)
	o := options{users: 2, clients: []int{2}, rounds: 1, duration: time.Second, baselineDuration: time.Second,
		deposit: 10_000_000, minAmount: 100, maxAmount: 1_000, kafka: "embedded", minSettled: 0.99,
		drainTimeout: time.Minute, baselineBin: bin, baselineName: "other"}
	start := time.Now()
	out, code := captureStdout(t, func() int { return run(o) })
	t.Logf("pairing took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, out)
	}
	for _, re := range []string{
		`(?m)^  transfers/s +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$`,
		`(?m)^  commits/tr +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$`,
		`(?m)^  WAL bytes/tr +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+$`,
		`(?m)^  fiat cmds/batch +[0-9.]+ +[0-9.]+ `,
		`(?m)^PASS every transfer settled +([0-9]+) of ([0-9]+)$`,
		`(?m)^PASS conservation held`,
		`(?m)^(PASS|MISS) commits/transfer <= 0.50 x other +[0-9.]+$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
}

func captureStdout(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&buf, r); close(done) }()
	code := f()
	os.Stdout = saved
	w.Close()
	<-done
	return buf.String(), code
}

func TestParseEnv(t *testing.T) {
	got, err := parseEnv(" OTEL_EXPORTER_OTLP_ENDPOINT={otlp}, OTEL_TRACES_SAMPLER_ARG=0.01,,EMPTY=")
	if err != nil || len(got) != 3 || got["OTEL_EXPORTER_OTLP_ENDPOINT"] != "{otlp}" || got["OTEL_TRACES_SAMPLER_ARG"] != "0.01" || got["EMPTY"] != "" {
		t.Fatalf("parseEnv = %v, %v", got, err)
	}
	if _, err := parseEnv("NOEQUALS"); err == nil {
		t.Fatal("a pair without = accepted")
	}
}
