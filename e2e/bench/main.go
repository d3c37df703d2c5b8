// Command bench measures the money path against two plain-SQL baselines.
//
// For each round and each client count it starts a fresh platform
// (`platform run`, its own database and data directory) on the local stack,
// registers users and funds their wallets through the real signed deposit
// webhook, and runs:
//
//   - the platform: transfers over HTTP from a lean generator (pre-built
//     bodies, fasthttp) for -duration, 503s retried with the same
//     Idempotency-Key; the clock runs on until the ledger chain holds every
//     settled transfer and the lag of the fiat, ledger, reputation and
//     ClickHouse sink groups is 0, and that drain time counts. Conservation
//     (every KZT balance, fee wallet included, sums to what was deposited)
//     is checked after every run. The platform is then stopped; with
//     -baseline-bin, a binary built from another commit runs the same way
//     in the same round (first place alternating) and the summary prints
//     the median of the per-round ratios (ab.go);
//   - baseline T and baseline S (baseline.go) on the same Postgres server,
//     while the platform is stopped.
//
// It prints each run, a table per client count (medians over the rounds),
// and last `median ratio ...`. With -soak it prints the throughput of every
// minute.
//
//	go run ./e2e/bench -clients 32 -rounds 3 -duration 30s
//	go run ./e2e/bench -clients 8,32,128
//	go run ./e2e/bench -duration 10m -rounds 1 -baselines none -soak
//	go run ./e2e/bench -baseline-bin /tmp/platform-6e24b4b -baseline-name 6e24b4b
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/ksuid"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/storage/postgres/pgtest"
	"github.com/fintech/platform/topics"
)

type options struct {
	users            int
	clients          []int
	rounds           int
	duration         time.Duration
	baselineDuration time.Duration
	deposit          int64
	minAmount        int64
	maxAmount        int64
	baselines        []string
	baselineConns    int
	kafka            string
	minSettled       float64
	drainTimeout     time.Duration
	soak             bool
	pprofDir         string
	baselineBin      string
	baselineName     string
	statsSettle      time.Duration
	// env and baselineEnv are settings of this tree's runs and of the
	// -baseline-bin runs (an A/B of one binary in two configurations, such
	// as tracing on against off); {otlp} stands for the bench's own OTLP
	// collector, which receives spans and drops them.
	env, baselineEnv map[string]string
}

func main() {
	var o options
	var clients, baselines, env, baselineEnv string
	flag.IntVar(&o.users, "users", 100, "users (and KZT wallets) to create")
	flag.StringVar(&clients, "clients", "32", "comma-separated concurrent client counts, e.g. 8,32,128 for the scaling table")
	flag.Func("concurrency", "one client count (the old name of -clients)", func(v string) error { clients = v; return nil })
	flag.IntVar(&o.rounds, "rounds", 3, "alternating rounds (platform, T, S) per client count; the ratio is their median")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long the platform is sent transfers (its clock adds the drain)")
	flag.DurationVar(&o.baselineDuration, "baseline-duration", 0, "how long each baseline runs (default -duration)")
	flag.Int64Var(&o.deposit, "deposit", 10_000_000, "minor units deposited into each wallet")
	flag.Int64Var(&o.minAmount, "min-amount", 100, "smallest transfer, minor units")
	flag.Int64Var(&o.maxAmount, "max-amount", 10_000, "largest transfer, minor units")
	flag.StringVar(&baselines, "baselines", "T,S", "baselines to run: T, S, both, or none")
	flag.IntVar(&o.baselineConns, "baseline-conns", 64, "most Postgres connections a baseline opens (a pool, as an SQL service would)")
	flag.StringVar(&o.kafka, "kafka", "embedded", `"embedded" (kfake inside the platform process) or the KAFKA_BROKERS of an external cluster`)
	flag.Float64Var(&o.minSettled, "min-settled", 0.99, "share of started transfers that must settle, else the run fails")
	flag.DurationVar(&o.drainTimeout, "drain-timeout", 5*time.Minute, "longest wait for lag 0 after a platform run")
	flag.BoolVar(&o.soak, "soak", false, "print throughput per minute and compare the last minute with the first")
	flag.StringVar(&o.pprofDir, "pprof", "", "directory: profile the platform process (PPROF_ADDR on loopback) during every platform run: CPU, trace, block, mutex, allocs")
	flag.StringVar(&o.baselineBin, "baseline-bin", "", "a platform binary built from another commit (make bench BENCH_AGAINST=<commit> builds one): it runs in every round next to the current binary, first place alternating, and the summary prints the median ratios current/baseline")
	flag.StringVar(&o.baselineName, "baseline-name", "baseline", "what the summary calls -baseline-bin (e.g. its commit)")
	flag.DurationVar(&o.statsSettle, "stats-settle", 11*time.Second, "wait after the setup so that every Postgres backend has flushed its statistics (an idle one holds them up to 10 s) before the commit count starts")
	flag.StringVar(&env, "env", "", "KEY=VALUE,... settings of this tree's platform runs; {otlp} is the bench's own span sink, e.g. OTEL_EXPORTER_OTLP_ENDPOINT={otlp}")
	flag.StringVar(&baselineEnv, "baseline-env", "", "KEY=VALUE,... settings of the -baseline-bin runs (with -baseline-bin bin/platform: one binary, two configurations)")
	flag.Parse()
	var err error
	if o.env, err = parseEnv(env); err != nil {
		usage("bad -env: %v", err)
	}
	if o.baselineEnv, err = parseEnv(baselineEnv); err != nil {
		usage("bad -baseline-env: %v", err)
	}
	if o.baselineDuration == 0 {
		o.baselineDuration = o.duration
	}
	for _, s := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			usage("bad -clients %q", clients)
		}
		o.clients = append(o.clients, n)
	}
	switch strings.ToUpper(strings.ReplaceAll(baselines, " ", "")) {
	case "T,S", "S,T", "BOTH":
		o.baselines = []string{"T", "S"}
	case "T":
		o.baselines = []string{"T"}
	case "S":
		o.baselines = []string{"S"}
	case "NONE", "":
	default:
		usage("bad -baselines %q", baselines)
	}
	if o.users < 2 || o.rounds < 1 || o.duration <= 0 || o.minAmount < 1 || o.maxAmount < o.minAmount {
		usage("need -users >= 2, -rounds >= 1, -duration > 0, 1 <= -min-amount <= -max-amount")
	}
	if clusterOpt.on {
		os.Exit(runCluster(o)) // cluster.go
	}
	os.Exit(run(o))
}

// parseEnv reads KEY=VALUE,... pairs.
func parseEnv(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not KEY=VALUE", kv)
		}
		out[k] = v
	}
	return out, nil
}

// spanSink is an OTLP/HTTP collector that answers every export and keeps
// nothing: the cost of tracing is the platform's, not a collector's.
func spanSink() (string, func()) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	return srv.URL, srv.Close
}

func usage(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(2)
}

// round is one round's measurements for one client count: the platform
// (the current binary), the -baseline-bin binary when there is one (nil
// when it could not run) and the SQL baselines.
type round struct {
	platform *results
	against  *results
	base     map[string]*results
}

// subject is a platform binary the bench runs: the current one (bin empty:
// $PLATFORM_BIN or one built from this tree) or -baseline-bin.
type subject struct {
	name string
	bin  string
	env  map[string]string
}

func run(o options) int {
	ptb := harness.NewProcessTB()
	defer ptb.Close()
	ctx := context.Background()

	// The bench always uses the local stack's Postgres and ClickHouse; the
	// broker is what -kafka says, never chosen behind the caller's back.
	os.Setenv("E2E_LOCAL_STACK", "1")
	broker := "embedded franz-go kfake inside each `platform run` process (acks=all writes and offset commits fsynced before they are acknowledged, group commit; the gateway's commands acks=1); not a Kafka cluster"
	if o.kafka != "embedded" {
		broker = "external Kafka at " + o.kafka + " (KAFKA_BROKERS)"
	}
	describeMachine(ctx, o, broker, pgtest.ServerURL())
	admin, err := pgxpool.New(ctx, pgtest.ServerURL())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer admin.Close()

	sink, stopSink := spanSink()
	defer stopSink()
	withSink := func(env map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range env {
			out[k] = strings.ReplaceAll(v, "{otlp}", sink)
		}
		return out
	}
	subjects := []subject{{name: "platform", env: withSink(o.env)}}
	if o.baselineBin != "" {
		subjects = append(subjects, subject{name: o.baselineName, bin: o.baselineBin, env: withSink(o.baselineEnv)})
		fmt.Printf("A/B: platform = %s, %s = %s, alternating first place every round, each run on a fresh database and data directory\n",
			harness.Binary(ptb), o.baselineName, o.baselineBin)
	}

	var bdb *baselineDB
	if len(o.baselines) > 0 {
		if bdb, err = newBaselineDB(ptb); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
	}

	var failures []string
	runs := map[int][]round{}
	for r := 1; r <= o.rounds; r++ {
		for _, n := range o.clients {
			rd := round{base: map[string]*results{}}
			for _, s := range alternate(subjects, r) {
				step(fmt.Sprintf("round %d/%d, %d clients: %s for %s, then drain to lag 0 (load %s)", r, o.rounds, n, s.name, o.duration, loadAvg()))
				res, err := runPlatform(ctx, admin, o, s, r, n)
				if err != nil {
					if s.bin == "" {
						fmt.Fprintln(os.Stderr, "bench:", err)
						return 1
					}
					// The other binary is measured, not judged: its figures
					// become n/a and the pairing goes on.
					fmt.Printf("  %s: could not run: %v (its figures are n/a)\n", s.name, err)
					continue
				}
				printRun(s.name, n, res)
				res.soakReport(o)
				problems := res.problems(o)
				if s.bin == "" {
					rd.platform = res
					for _, f := range problems {
						failures = append(failures, fmt.Sprintf("round %d, %d clients: %s", r, n, f))
					}
				} else {
					rd.against = res
					for _, f := range problems {
						fmt.Printf("  %s (not a failure of this bench): %s\n", s.name, f)
					}
				}
			}
			for _, kind := range o.baselines {
				step(fmt.Sprintf("round %d/%d, %d clients: baseline %s for %s (load %s)", r, o.rounds, n, kind, o.baselineDuration, loadAvg()))
				br, err := runBaseline(bdb, kind, n, o)
				if err != nil {
					fmt.Fprintln(os.Stderr, "bench:", err)
					return 1
				}
				printRun("baseline "+kind, n, br)
				if !br.conserved {
					failures = append(failures, fmt.Sprintf("round %d, %d clients: baseline %s conservation violated", r, n, kind))
				}
				rd.base[kind] = br
			}
			runs[n] = append(runs[n], rd)
		}
	}
	summarize(o, runs, broker, failures)
	if o.baselineBin != "" {
		summarizeAB(o, runs)
	}
	printTargets(evalTargets(o, runs, failures))
	if len(failures) > 0 {
		return 1
	}
	return 0
}

// alternate returns the subjects in round r's order: as given in odd
// rounds, reversed in even ones, so that neither binary always goes first.
func alternate(s []subject, r int) []subject {
	out := slices.Clone(s)
	if r%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// problems are the run's failed checks: conservation, unexpected answers,
// too few settled.
func (r *results) problems(o options) []string {
	var out []string
	if !r.conserved {
		out = append(out, "platform conservation violated")
	}
	if u := r.unexpected(); u > 0 {
		out = append(out, fmt.Sprintf("%d answers other than 200 or a retried 503", u))
	}
	if sh := r.settledShare(); sh < o.minSettled {
		out = append(out, fmt.Sprintf("%.2f%% of the transfers settled, under %.2f%%", 100*sh, 100*o.minSettled))
	}
	return out
}

// runTB is the harness's process TB whose Fatalf returns to runPlatform
// (as an error) instead of ending the bench: a binary from another commit
// that cannot start must not end the pairing.
type runTB struct{ *harness.ProcessTB }

type fatal string

func (t runTB) Fatalf(format string, args ...any) { panic(fatal(fmt.Sprintf(format, args...))) }

// runPlatform runs binary s once on a database and data directory of its
// own: start, register and fund the users, wait -stats-settle, then the
// measured load and drain, and stop. The database's commits and the
// cluster's WAL are read before the load and after the stop, once no
// backend is left on the database (an exiting backend flushes its
// statistics).
func runPlatform(ctx context.Context, admin *pgxpool.Pool, o options, s subject, r, n int) (res *results, err error) {
	tb := runTB{harness.NewProcessTB()}
	defer tb.Close()
	defer func() {
		if v := recover(); v != nil {
			f, ok := v.(fatal)
			if !ok {
				panic(v)
			}
			err = fmt.Errorf("%s: %s", s.name, lastLines(string(f), 15))
		}
	}()
	dbName := "bench_" + strings.ToLower(ksuid.New().String())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbName); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	tb.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)")
	})
	dbURL, err := withDatabase(pgtest.ServerURL(), dbName)
	if err != nil {
		return nil, err
	}
	secret := "whsec_bench_" + fmt.Sprint(time.Now().UnixNano())
	env := map[string]string{
		"PROCESSOR_WEBHOOK_SECRET": secret,
		"FIAT_CAP_PER_TRANSFER":    "1000000000000000",
		"FIAT_CAP_DAILY_DEPOSIT":   "1000000000000000",
		"FIAT_CAP_MONTHLY":         "1000000000000000",
		// The platform's own pool size, not the harness's test setting.
		"DB_MAX_CONNS": "",
		// The latency budget's times (gateway/commands.HeaderHops).
		"LATENCY_HOPS": "1",
	}
	if o.kafka != "embedded" {
		env["KAFKA_BROKERS"] = o.kafka
	}
	for k, v := range s.env {
		env[k] = v
	}
	var prof *profiler
	if o.pprofDir != "" {
		pprofAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(tb))
		env["PPROF_ADDR"] = pprofAddr
		if prof, err = newProfiler(pprofAddr, o.pprofDir, s.bin); err != nil {
			return nil, err
		}
	}
	p := harness.Start(tb, harness.Options{Env: env, Binary: s.bin, DatabaseURL: dbURL})
	brokers := []string{p.KafkaAddr}
	if o.kafka != "embedded" {
		brokers = topics.ParseBrokers(o.kafka)
	}
	lags, err := newLagReader(brokers)
	if err != nil {
		return nil, fmt.Errorf("KAFKA_BROKERS: %w", err)
	}
	defer lags.Close()
	c, err := newClient(p.BaseURL, n)
	if err != nil {
		return nil, err
	}
	db, err := pgxpool.New(ctx, p.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer func() { db.Close() }()
	step(fmt.Sprintf("%s: registering %d users and funding their KZT wallets through the signed deposit webhook", s.name, o.users))
	accounts, err := c.setup(o.users, o.deposit, secret)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	// One ledger entry per deposit; every settled transfer adds one.
	wantHeight := int64(o.users)
	if _, err := lags.drain(ctx, db, wantHeight, o.drainTimeout); err != nil {
		return nil, fmt.Errorf("after setup: %w", err)
	}
	// A backend flushes its statistics at most once a second while busy
	// and within 10 s once idle: after the wait, the setup's commits are
	// all in pg_stat_database, and what the window counts is the load, the
	// drain and the platform's own background work meanwhile.
	if o.statsSettle > 0 {
		step(fmt.Sprintf("%s: %s for the setup's statistics to be flushed", s.name, o.statsSettle))
		time.Sleep(o.statsSettle)
	}
	pg0, pgErr := readSnapshot(ctx, admin)
	var ackFees int64

	meter := newMeter(ctx, lags, db, p.MetricsAddr)
	logMark := len(p.Logs())
	used0 := meter.read(ctx)
	rss0 := peakRSS(p.Pid())
	gen0, sut0 := selfCPU(), procCPU(p.Pid())
	label := fmt.Sprintf("%s-r%dc%d", s.name, r, n)
	prof.start(label, o.duration*2/3)
	res = c.load(accounts, n, o, fmt.Sprintf("r%dc%d-%d", r, n, time.Now().UnixNano()))
	res.genCPU = selfCPU() - gen0
	wantHeight += res.ok
	lag0, _ := lags.lagOf(ctx)
	fmt.Printf("  lag when the load stopped: %s\n", formatLag(lag0))
	lag, drainErr := lags.drain(ctx, db, wantHeight, o.drainTimeout)
	// The clock runs from the first request to lag 0.
	res.elapsed = time.Since(res.start)
	res.drainTime = res.elapsed - res.loadTime
	res.sutCPU = procCPU(p.Pid()) - sut0
	res.used = meter.read(ctx).sub(used0)
	res.peakRSS, res.startRSS = peakRSS(p.Pid()), rss0
	res.top = prof.wait(label)
	if drainErr != nil {
		fmt.Fprintln(os.Stderr, "bench: drain:", drainErr)
		// A drain that never ends is the rare failure worth a post-mortem:
		// the whole log is kept, not only its tail.
		if path, err := keepLog(os.TempDir(), label, p.Logs()); err != nil {
			fmt.Fprintln(os.Stderr, "bench: keep the platform log:", err)
		} else {
			fmt.Printf("  platform log of the run that did not drain: %s\n", path)
		}
		printLogTail(p.Logs(), logMark, 40)
	}
	fmt.Printf("  drained in %.2fs, lag now: %s\n", res.drainTime.Seconds(), formatLag(lag))
	ackFees += res.fees
	res.conserved, err = conservation(ctx, db, o, ackFees)
	if err != nil {
		return nil, fmt.Errorf("conservation: %w", err)
	}
	if drainErr != nil {
		res.conserved = false
	}
	if res.retries > 0 || res.transport > 0 || res.transportRetries > 0 {
		printLogTail(p.Logs(), logMark, 15)
	}
	db.Close()
	p.Stop()
	if pgErr == nil {
		var pg1 pgSnapshot
		if pg1, pgErr = quietSnapshot(ctx, admin, dbName); pgErr == nil {
			res.pg = pg1.sub(pg0, dbName)
		}
	}
	if pgErr != nil {
		fmt.Printf("  commits and WAL: n/a (%v)\n", pgErr)
	}
	return res, nil
}

// withDatabase returns url with its database replaced by name.
func withDatabase(url, name string) (string, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// lastLines keeps the last n lines of s (a start failure carries the
// process's whole log).
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[len(lines)-n:], "\n")
}

// warmUp sends one transfer and waits for it to settle (the consumer group
// has rejoined after a restart); it returns the fee.
func (c *client) warmUp(accounts []account) (int64, error) {
	deadline := time.Now().Add(2 * time.Minute)
	key := "bench-warmup-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	body := map[string]any{"fromWalletId": accounts[0].walletID, "toEmail": accounts[1].email, "amountKzt": 100, "memo": "warm-up"}
	for {
		var out struct {
			FeeKzt int64 `json:"feeKzt"`
		}
		st, raw, err := c.callKey("POST", "/api/fiat/transfer", accounts[0].token, key, body, &out)
		if err == nil && st == 200 {
			return out.FeeKzt, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("warm-up transfer: %d %s %v", st, raw, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// conservation checks that every KZT balance, the fee wallet's included,
// sums to what was deposited, and that the fee wallet holds at least the
// fees of the acknowledged transfers.
func conservation(ctx context.Context, db *pgxpool.Pool, o options, ackFees int64) (bool, error) {
	var sum, feeWallet, negative int64
	err := db.QueryRow(ctx, `SELECT coalesce(sum(balance), 0)::bigint,
		coalesce(sum(balance) FILTER (WHERE kind = 'fee'), 0)::bigint,
		count(*) FILTER (WHERE balance < 0)
		FROM fiat_wallets WHERE currency = 'KZT'`).Scan(&sum, &feeWallet, &negative)
	if err != nil {
		return false, err
	}
	want := o.deposit * int64(o.users)
	ok := sum == want && negative == 0 && feeWallet >= ackFees
	fmt.Printf("  conservation            user balances %d + fee wallet %d = %d, deposited %d; acknowledged fees %d <= fee wallet: %s\n",
		sum-feeWallet, feeWallet, sum, want, ackFees, okWord(ok))
	return ok, nil
}

func printRun(what string, clients int, r *results) {
	fmt.Printf("  %-22s %8.1f transfers/s  (%d in %.1fs", what, r.throughput(), r.ok, r.elapsed.Seconds())
	if r.drainTime > 0 {
		fmt.Printf(" = %.1fs load + %.2fs drain", r.loadTime.Seconds(), r.drainTime.Seconds())
	}
	fmt.Printf(", %d clients", clients)
	if r.conns > 0 {
		fmt.Printf(" over %d connections", r.conns)
	}
	fmt.Printf(")\n")
	fmt.Printf("  %-22s p50 %.1fms  p95 %.1fms  p99 %.1fms\n", "latency", ms(r.p(0.50)), ms(r.p(0.95)), ms(r.p(0.99)))
	printBudget(r)
	if r.sutCPU > 0 {
		fmt.Printf("  %-22s platform process %.0f µs/transfer (%.0f%% of a core); load generator %.0f µs/transfer (%.0f%% of a core)\n",
			"CPU", cpuPer(r.sutCPU, r.ok), 100*r.sutCPU.Seconds()/r.elapsed.Seconds(), cpuPer(r.genCPU, r.ok), 100*r.genCPU.Seconds()/r.elapsed.Seconds())
	} else if r.genCPU > 0 {
		fmt.Printf("  %-22s client %.0f µs/transfer (%.0f%% of a core); Postgres server not attributed (shared)\n",
			"CPU", cpuPer(r.genCPU, r.ok), 100*r.genCPU.Seconds()/r.elapsed.Seconds())
	}
	if r.drainTime > 0 {
		printCost(r)
		fmt.Printf("  %-22s %d of %d started (%.2f%%); 503 retries (same key) %d; answers %v; transport errors %d\n",
			"settled", r.ok, r.attempted, 100*r.settledShare(), r.retries, r.byStatus, r.transport)
		if len(r.byCode) > 0 {
			fmt.Printf("  %-22s %v\n", "not 200", r.byCode)
		}
		if r.transportRetries > 0 {
			fmt.Printf("  %-22s %d resends after a transport error (same key)\n", "", r.transportRetries)
		}
	} else {
		fmt.Printf("  %-22s %d of %d (rest rolled back: balance too low)\n", "committed", r.ok, r.attempted)
	}
}

// printCost prints what a platform run used per settled transfer.
func printCost(r *results) {
	u, n := r.used, float64(r.ok)
	if n == 0 {
		return
	}
	perBatch := "n/a"
	if u.batches > 0 && u.roundTrips > 0 {
		perBatch = fmt.Sprintf("%.2f", u.roundTrips/u.batches)
	}
	fmt.Printf("  %-22s %.2f Kafka records, %.2f fsyncs (broker %.2f + Postgres WAL %.2f); fiat batches: %.1f commands, %s Postgres round trips each\n",
		"per transfer", float64(u.records)/n, (u.brokerFsyncs+float64(u.walSyncs))/n, u.brokerFsyncs/n, float64(u.walSyncs)/n,
		orZero(n/u.batches), perBatch)
	topicNames := slices.Sorted(maps.Keys(u.byTopic))
	parts := make([]string, 0, len(topicNames))
	for _, t := range topicNames {
		parts = append(parts, fmt.Sprintf("%s %.2f", t, float64(u.byTopic[t])/n))
	}
	fmt.Printf("  %-22s %s\n", "records by topic", strings.Join(parts, ", "))
	pg := "n/a"
	if u.pgCPU > 0 {
		pg = fmt.Sprintf("%.0f", cpuPer(u.pgCPU, r.ok))
	}
	fmt.Printf("  %-22s platform %.0f + Postgres %s + ClickHouse %.0f µs/transfer; platform peak RSS %.0f MB (%.0f MB before the load: start-up, setup)\n",
		"CPU per transfer", cpuPer(r.sutCPU, r.ok), pg, cpuPer(u.chCPU, r.ok), float64(r.peakRSS)/(1<<20), float64(r.startRSS)/(1<<20))
	if u.cpus > 0 {
		fmt.Printf("  %-22s %.0f%% of all %d cores busy over the window (load, drain and the bench itself; /proc/stat)\n",
			"machine", 100*float64(u.busy)/float64(u.cpus), runtime.NumCPU())
	}
	cmds := "n/a"
	if v, ok := r.commandsPerBatch(); ok {
		cmds = fmt.Sprintf("%.1f", v)
	}
	if r.pg.ok {
		fmt.Printf("  %-22s %.3f commits (this database's xact_commit, read-only ones included), %.3f write transactions (xids), %.0f WAL bytes (both the cluster's; other databases committed %d meanwhile%s); fiat applier %s commands per batch\n",
			"Postgres per transfer", float64(r.pg.commits)/n, float64(r.pg.writeXacts)/n, float64(r.pg.walBytes)/n, r.pg.otherCommits, r.pg.noiseNote(), cmds)
	} else {
		fmt.Printf("  %-22s commits n/a, WAL n/a; fiat applier %s commands per batch\n", "Postgres per transfer", cmds)
	}
}

func orZero(x float64) float64 {
	if x != x || x > 1e12 {
		return 0
	}
	return x
}

// keepLog writes a platform's whole log to a new file in dir and returns
// its path.
func keepLog(dir, label, logs string) (string, error) {
	f, err := os.CreateTemp(dir, "bench-"+label+"-*.log")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(logs); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// printLogTail prints the last n lines the platform logged since offset
// mark, to show why requests were retried or the drain did not end.
func printLogTail(logs string, mark, n int) {
	if mark > len(logs) {
		mark = 0
	}
	lines := strings.Split(strings.TrimSpace(logs[mark:]), "\n")
	if len(lines) == 1 && lines[0] == "" {
		fmt.Println("  platform log: nothing logged during the run (LOG_LEVEL=warn)")
		return
	}
	fmt.Printf("  platform log during the run (%d lines, last %d):\n", len(lines), min(n, len(lines)))
	for _, l := range lines[max(0, len(lines)-n):] {
		fmt.Println("    " + l)
	}
}

// soakReport prints the per-minute throughput of a -soak run; it reports
// whether the last minute is within 10% of the first.
func (r *results) soakReport(o options) bool {
	if !o.soak || len(r.perMinute) == 0 {
		return true
	}
	fmt.Println("  throughput per minute:")
	for i, n := range r.perMinute {
		fmt.Printf("    minute %2d  %8.1f transfers/s\n", i+1, float64(n)/60)
	}
	first, last := r.perMinute[0], r.perMinute[len(r.perMinute)-1]
	ok := float64(last) >= 0.95*float64(first)
	fmt.Printf("  soak: last minute / first minute = %.2f (target >= 0.95): %s\n", float64(last)/float64(first),
		map[bool]string{true: "OK", false: "MISSED"}[ok])
	return ok
}

// orDash formats the median of xs, or "-" when there is none.
func orDash(xs []float64, format string) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf(format, median(xs))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// summarize prints the per-run figures, the table and, last, the median
// ratio line.
func summarize(o options, runs map[int][]round, broker string, failures []string) {
	fmt.Printf("\n== summary: %d round(s) per client count, platform clock includes the drain to lag 0\n", o.rounds)
	fmt.Printf("broker: %s\n", broker)
	fmt.Printf("%8s %12s %8s %8s %8s %12s %12s %7s %7s %14s %7s %9s %9s %8s %7s\n", "clients", "platform/s", "p50 ms", "p99 ms", "drain s", "T/s", "S/s", "plat/T", "plat/S",
		"CPU µs/tr p+pg", "rec/tr", "cmds/bat", "commit/tr", "WAL B/tr", "RSS MB")
	type ratio struct{ t, s float64 }
	med := map[int]ratio{}
	for _, n := range o.clients {
		var pt, p50, p99, dr, tt, st, rt, rs, cpu, rec, rss []float64
		rounds := runs[n]
		metricOf := func(name string) []float64 {
			i := slices.IndexFunc(abMetrics, func(m metric) bool { return m.name == name })
			return values(rounds, abMetrics[i], func(rd round) *results { return rd.platform })
		}
		for _, rd := range rounds {
			pt = append(pt, rd.platform.throughput())
			p50 = append(p50, ms(rd.platform.p(0.50)))
			if ok := rd.platform.ok; ok > 0 {
				cpu = append(cpu, cpuPer(rd.platform.sutCPU+rd.platform.used.pgCPU, ok))
				rec = append(rec, float64(rd.platform.used.records)/float64(ok))
			}
			rss = append(rss, float64(rd.platform.peakRSS)/(1<<20))
			p99 = append(p99, ms(rd.platform.p(0.99)))
			dr = append(dr, rd.platform.drainTime.Seconds())
			if b := rd.base["T"]; b != nil {
				tt = append(tt, b.throughput())
				rt = append(rt, rd.platform.throughput()/b.throughput())
			}
			if b := rd.base["S"]; b != nil {
				st = append(st, b.throughput())
				rs = append(rs, rd.platform.throughput()/b.throughput())
			}
		}
		med[n] = ratio{median(rt), median(rs)}
		fmt.Printf("%8d %12.1f %8.1f %8.1f %8.2f %12s %12s %7s %7s %14s %7s %9s %9s %8s %7s\n", n, median(pt), median(p50), median(p99), median(dr),
			orDash(tt, "%.1f"), orDash(st, "%.1f"), orDash(rt, "%.2f"), orDash(rs, "%.2f"),
			orDash(cpu, "%.0f"), orDash(rec, "%.2f"), orDash(metricOf("fiat cmds/batch"), "%.1f"),
			orDash(metricOf("commits/tr"), "%.3f"), orDash(metricOf("WAL bytes/tr"), "%.0f"), orDash(rss, "%.0f"))
		for i, rd := range runs[n] {
			line := fmt.Sprintf("  run %d: platform %.1f/s", i+1, rd.platform.throughput())
			for _, k := range o.baselines {
				line += fmt.Sprintf(", %s %.1f/s (ratio %.2f)", k, rd.base[k].throughput(), rd.platform.throughput()/rd.base[k].throughput())
			}
			fmt.Println(line)
		}
	}
	if len(failures) == 0 {
		fmt.Printf("checks: every run conserved money, >= %.0f%% of the platform's transfers settled, no answer but 200 and retried 503s: OK\n", 100*o.minSettled)
	} else {
		fmt.Println("checks: FAILED")
		for _, f := range failures {
			fmt.Println("  " + f)
		}
	}
	if len(o.baselines) == 0 {
		return
	}
	primary := o.clients[0]
	if slices.Contains(o.clients, 32) {
		primary = 32
	}
	m := med[primary]
	var parts []string
	if slices.Contains(o.baselines, "T") {
		parts = append(parts, fmt.Sprintf("platform/T %.2f", m.t))
	}
	if slices.Contains(o.baselines, "S") {
		parts = append(parts, fmt.Sprintf("platform/S %.2f", m.s))
	}
	fmt.Printf("median ratio %s (%d clients, %d alternating runs)\n", strings.Join(parts, "  "), primary, len(runs[primary]))
}

// describeMachine prints what the figures depend on.
func describeMachine(ctx context.Context, o options, broker, dbURL string) {
	fmt.Printf("bench: %s, %d users, clients %v, %d round(s), platform %s + drain, baselines %v for %s\n",
		time.Now().UTC().Format(time.RFC3339), o.users, o.clients, o.rounds, o.duration, o.baselines, o.baselineDuration)
	fmt.Printf("machine: %d cores, %s, load average %s\n", runtime.NumCPU(), runtime.Version(), loadAvg())
	fmt.Printf("broker: %s\n", broker)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return
	}
	defer pool.Close()
	var settings []string
	for _, name := range []string{"server_version", "synchronous_commit", "fsync", "shared_buffers", "max_wal_size", "wal_compression", "jit"} {
		var v string
		if err := pool.QueryRow(ctx, "SHOW "+name).Scan(&v); err == nil {
			settings = append(settings, name+"="+v)
		}
	}
	fmt.Printf("postgres: %s\n", strings.Join(settings, " "))
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func step(s string) { fmt.Fprintf(os.Stderr, "==> %s\n", s) }
